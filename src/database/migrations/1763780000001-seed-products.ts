import { MigrationInterface, QueryRunner } from 'typeorm';

/** The three seed products (docs/licences.md, Products). */
export class SeedProducts1763780000001 implements MigrationInterface {
  name = 'SeedProducts1763780000001';

  async up(q: QueryRunner): Promise<void> {
    const seeds = [
      [
        'POS_RETAIL',
        'Retail Point of Sale',
        'POS',
        { max_installations: 1, max_operators: 5 },
        ['FISCAL_PRINTING', 'MULTI_OPERATOR', 'INVENTORY', 'REPORTS'],
      ],
      ['ERP_SUITE', 'ERP Suite', 'ERP', { max_installations: 1, max_operators: 10 }, ['ACCOUNTING', 'PAYROLL', 'INVENTORY', 'E_INVOICING']],
      ['FISCAL_BRIDGE', 'Fiscal Bridge', 'FB', { max_installations: 1 }, ['E_FISCAL', 'OFFLINE_QUEUE', 'REMOTE_SUPPORT']],
    ] as const;
    for (const [code, name, prefix, limits, features] of seeds) {
      await q.query(
        `INSERT INTO products (code, name, key_prefix, default_limits, available_features)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
        [code, name, prefix, JSON.stringify(limits), JSON.stringify(features)],
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `DELETE FROM products WHERE code IN ('POS_RETAIL', 'ERP_SUITE', 'FISCAL_BRIDGE') AND NOT EXISTS (SELECT 1 FROM licenses l WHERE l.product_id = products.id)`,
    );
  }
}
