import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { lockForTransaction } from '../database/advisory-lock';
import { runStatement, sql } from '../database/statement';

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
    return runStatement<SavedViewRow>(
      this.dataSource.manager,
      'saved-views-list',
      sql`SELECT id, name, query, author FROM saved_views ORDER BY lower(name), id LIMIT ${limit}`,
    );
  }

  /**
   * Saves the view under its name (the same name replaces that view's query), unless `max` views exist and the name is
   * new; null when refused for the number. Savers take turns (a transaction-scoped advisory lock), so two saving at
   * once cannot both pass the count.
   */
  async save(name: string, query: string, author: string, max: number): Promise<number | null> {
    return this.dataSource.transaction(async (manager) => {
      await lockForTransaction(manager, 'saved_views');
      const rows = await runStatement<{ id: number }>(
        manager,
        'saved-views-save',
        sql`INSERT INTO saved_views (name, query, author)
         SELECT ${name}::varchar, ${query}::varchar, ${author}::varchar
         WHERE EXISTS (SELECT 1 FROM saved_views WHERE name = ${name}::varchar) OR (SELECT count(*) FROM saved_views) < ${max}::int
         ON CONFLICT (name) DO UPDATE SET query = EXCLUDED.query, author = EXCLUDED.author, updated_at = now()
         RETURNING id`,
      );
      return rows[0]?.id ?? null;
    });
  }

  /** Deletes the view; false when there was none. */
  async delete(id: number): Promise<boolean> {
    const rows = await runStatement<{ id: number }>(
      this.dataSource.manager,
      'saved-views-delete',
      sql`DELETE FROM saved_views WHERE id = ${id} RETURNING id`,
    );
    return rows.length === 1;
  }
}
