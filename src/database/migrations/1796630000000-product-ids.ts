import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Product limits by product id, not code (docs/security.md, Review findings (round 3)): a code can be renamed and
 * then taken by another product, and a limit stored as the code would follow it there.
 *
 * - admin_tokens.products (codes) becomes product_ids (ids), converted by today's codes. A code no product has
 *   any more is dropped, so such a token loses that product (never gains every product: an empty list sees nothing).
 * - webhook_endpoints.product_ids: the products an endpoint made by a limited token receives events of; null for
 *   every product. An existing endpoint that the audit log says a limited token made gets that token's products.
 */
export class ProductIds1796630000000 implements MigrationInterface {
  name = 'ProductIds1796630000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE admin_tokens ADD COLUMN product_ids int[]`);
    await q.query(
      `UPDATE admin_tokens t SET product_ids = ARRAY(SELECT p.id FROM products p WHERE p.code = ANY(t.products) ORDER BY p.id)
       WHERE t.products IS NOT NULL`,
    );
    await q.query(`ALTER TABLE admin_tokens DROP COLUMN products`);
    await q.query(`ALTER TABLE webhook_endpoints ADD COLUMN product_ids int[]`);
    await q.query(
      `UPDATE webhook_endpoints e SET product_ids = t.product_ids
       FROM audit_entries a JOIN admin_tokens t ON a.actor = 'token:' || t.name
       WHERE a.action = 'webhook.created' AND a.details->>'webhook_id' = e.id::text AND t.product_ids IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_endpoints DROP COLUMN product_ids`);
    await q.query(`ALTER TABLE admin_tokens ADD COLUMN products text[]`);
    await q.query(
      `UPDATE admin_tokens t SET products = ARRAY(SELECT p.code FROM products p WHERE p.id = ANY(t.product_ids) ORDER BY p.id)
       WHERE t.product_ids IS NOT NULL`,
    );
    await q.query(`ALTER TABLE admin_tokens DROP COLUMN product_ids`);
  }
}
