import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook secrets encrypted at rest (docs/webhooks.md, "Secrets at rest"): room for the sealed form. The sealing itself
 * is the app's, at its next start (webhook-secrets.ts): this migration may run as `npm run migration:run`, without the
 * KEYRING_SECRET the server uses, and a secret sealed under the wrong one would sign nothing any more.
 */
export class WebhookSecretsEncrypted1796610000000 implements MigrationInterface {
  name = 'WebhookSecretsEncrypted1796610000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_endpoints ALTER COLUMN secret TYPE varchar(200)`);
  }

  async down(q: QueryRunner): Promise<void> {
    // The plain secrets are gone once sealed and this step has no KEYRING_SECRET to open them: refuse rather than break.
    const [{ sealed }] = (await q.query(
      `SELECT count(*)::int AS sealed FROM webhook_endpoints WHERE NOT starts_with(secret, 'whsec_')`,
    )) as { sealed: number }[];
    if (sealed > 0)
      throw new Error(
        `${sealed} webhook endpoint(s) have an encrypted secret the previous version cannot read: delete them (and create them again after the downgrade) first`,
      );
    await q.query(`ALTER TABLE webhook_endpoints ALTER COLUMN secret TYPE varchar(100)`);
  }
}
