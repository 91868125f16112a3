import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

export interface SavedViewRow {
  id: number;
  name: string;
  query: string;
  author: string;
}

/** Saved views of the licence list (docs/dashboard.md, Saved views). Style: named SQL with typed rows (docs/architecture.md, Database style). */
@Injectable()
export class SavedViewsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Every view, by name. */
  list(limit: number): Promise<SavedViewRow[]> {
    return this.dataSource.query(`SELECT id, name, query, author FROM saved_views ORDER BY lower(name), id LIMIT $1`, [limit]);
  }

  /**
   * Saves the view under its name (the same name replaces that view's query), unless `max` views exist and the name is
   * new; null when refused for the number. Savers take turns (a transaction-scoped advisory lock), so two saving at
   * once cannot both pass the count.
   */
  async save(name: string, query: string, author: string, max: number): Promise<number | null> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock(hashtext('saved_views'))`);
      const rows: { id: number }[] = await manager.query(
        `INSERT INTO saved_views (name, query, author)
         SELECT $1::varchar, $2::varchar, $3::varchar
         WHERE EXISTS (SELECT 1 FROM saved_views WHERE name = $1::varchar) OR (SELECT count(*) FROM saved_views) < $4::int
         ON CONFLICT (name) DO UPDATE SET query = EXCLUDED.query, author = EXCLUDED.author, updated_at = now()
         RETURNING id`,
        [name, query, author, max],
      );
      return rows[0]?.id ?? null;
    });
  }

  /** Deletes the view; false when there was none. */
  async delete(id: number): Promise<boolean> {
    const rows: { id: number }[] = await this.dataSource.query(
      `WITH gone AS (DELETE FROM saved_views WHERE id = $1 RETURNING id) SELECT id FROM gone`,
      [id],
    );
    return rows.length === 1;
  }
}
