import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
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
    await this.dataSource.query(
      `INSERT INTO release_downloads (release_id, day, count) VALUES ($1, (now() AT TIME ZONE 'UTC')::date, 1)
       ON CONFLICT (release_id, day) DO UPDATE SET count = release_downloads.count + 1`,
      [releaseId],
    );
  }

  /** Total downloads of each release. */
  async totals(releaseIds: number[]): Promise<Map<number, number>> {
    if (releaseIds.length === 0) return new Map();
    const rows = await this.dataSource.query<{ release_id: number; n: number }[]>(
      `SELECT release_id, sum(count)::int AS n FROM release_downloads WHERE release_id = ANY($1::int[]) GROUP BY release_id`,
      [releaseIds],
    );
    return new Map(rows.map((r) => [r.release_id, r.n]));
  }

  /** Downloads per UTC day of one release since `since` (a YYYY-MM-DD day), oldest first. */
  async days(releaseId: number, since: string): Promise<ReleaseDownloadDay[]> {
    const rows = await this.dataSource.query<{ release_id: number; day: string; count: number }[]>(
      `SELECT release_id, to_char(day, 'YYYY-MM-DD') AS day, count FROM release_downloads
        WHERE release_id = $1 AND day >= $2::date ORDER BY day`,
      [releaseId, since],
    );
    return rows.map((r) => Object.assign(new ReleaseDownloadDay(), { releaseId: r.release_id, day: r.day, count: r.count }));
  }
}
