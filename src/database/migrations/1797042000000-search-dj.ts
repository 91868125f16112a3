import { MigrationInterface, QueryRunner } from 'typeorm';
import { sqlFunction } from '../sql-functions';

/**
 * The staff search finds "Đorđe" both as "dorde" (unaccent's folding of Đ) and as "djordje", the way Serbian and
 * Croatian keyboards without Đ write it (docs/dashboard.md, Find a licence or a customer). The needle is folded as
 * before; the stored search_text of a name or e-mail with đ carries a second folding where đ is "dj".
 */
export class SearchDj1797042000000 implements MigrationInterface {
  name = 'SearchDj1797042000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(sqlFunction('licenses_search_text.v2'));
    // Fires the trigger for the rows whose text changes.
    await q.query(`UPDATE licenses SET license_key = license_key WHERE customer_name ~ '[đĐ]' OR customer_email ~ '[đĐ]'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(sqlFunction('licenses_search_text.v1'));
    await q.query(`UPDATE licenses SET license_key = license_key WHERE customer_name ~ '[đĐ]' OR customer_email ~ '[đĐ]'`);
  }
}
