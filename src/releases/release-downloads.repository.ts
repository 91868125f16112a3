import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { runStatement, sql } from '../database/statement';
import { ReleaseDownloadDay } from './release.entities';

/**
 * The download counters (release_downloads): one row per release and UTC day, raised by an upsert. Style: named SQL
 * with typed rows (docs/architecture.md, Database style).
 */
@Injectable()
export class ReleaseDownloadsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** One more download of the release today (UTC): one statement, safe under concurrency. */
  async countDownload(releaseId: number): Promise<void> {
    await runStatement(
      this.dataSource.manager,
      'release-downloads-count-download',
      sql`INSERT INTO release_downloads (release_id, day, count) VALUES (${releaseId}, (now() AT TIME ZONE 'UTC')::date, 1)
       ON CONFLICT (release_id, day) DO UPDATE SET count = release_downloads.count + 1`,
    );
  }

  /** Total downloads of each release. */
  async totals(releaseIds: number[]): Promise<Map<number, number>> {
    if (releaseIds.length === 0) return new Map();
    const rows = await runStatement<{ release_id: number; n: number }>(
      this.dataSource.manager,
      'release-downloads-totals',
      sql`SELECT release_id, sum(count)::int AS n FROM release_downloads WHERE release_id = ANY(${releaseIds}::int[]) GROUP BY release_id`,
    );
    return new Map(rows.map((r) => [r.release_id, r.n]));
  }

  /** Downloads per UTC day of one release since `since` (a YYYY-MM-DD day), oldest first. */
  async days(releaseId: number, since: string): Promise<ReleaseDownloadDay[]> {
    const rows = await runStatement<{ release_id: number; day: string; count: number }>(
      this.dataSource.manager,
      'release-downloads-days',
      sql`SELECT release_id, to_char(day, 'YYYY-MM-DD') AS day, count FROM release_downloads
        WHERE release_id = ${releaseId} AND day >= ${since}::date ORDER BY day`,
    );
    return rows.map((r) => Object.assign(new ReleaseDownloadDay(), { releaseId: r.release_id, day: r.day, count: r.count }));
  }
}
