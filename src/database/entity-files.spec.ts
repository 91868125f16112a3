import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENTITY_FILE, loadEntities } from './entity-files';

describe('loadEntities (every entity file under src/, no list in database/)', () => {
  it('finds each module’s tables', () => {
    const names = loadEntities(join(__dirname, '..')).map((entity) => entity.name);
    expect(names.sort()).toEqual(
      [
        'Activation',
        'AdminToken',
        'AuditEntry',
        'BulkOperation',
        'BulkOperationItem',
        'CustomerNote',
        'License',
        'LicenseExpiryNotice',
        'OutboxEvent',
        'LicenseSeatVersion',
        'Product',
        'RelayPool',
        'SavedView',
        'StaffInvite',
        'StatsDelta',
        'StoreEvent',
        'StorePlan',
        'StoredSigningKey',
        'Trial',
        'UsageCounter',
        'UsageIdempotencyKey',
        'User',
        'WebhookDelivery',
        'WebhookEndpoint',
        'MailMessage',
        'MailUnsubscribe',
        'PortalSignInToken',
        'Release',
        'ReleaseArtifact',
        'ReleaseDownloadDay',
        'StaffPasskey',
        'StaffRecoveryCode',
        'StaffSignInFailures',
        'StaffSsoIdentity',
        'StaffTotpSecret',
      ].sort(),
    );
  });

  it('refuses a file named as an entity file that exports no @Entity class (rather than dropping a table)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'entities-'));
    try {
      writeFileSync(join(dir, 'ghost.entity.js'), 'exports.Ghost = class Ghost {};\n');
      expect(() => loadEntities(dir, '.js')).toThrow(/ghost\.entity\.js is named as an entity file but exports no @Entity class/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names files as the modules do, and skips declarations and specs', () => {
    expect(ENTITY_FILE.test('licenses/license.entity.ts')).toBe(true);
    expect(ENTITY_FILE.test('webhooks/webhook.entities.js')).toBe(true);
    expect(ENTITY_FILE.test('licenses/license.entity.d.ts')).toBe(false);
    expect(ENTITY_FILE.test('licenses/license.entity.spec.ts')).toBe(false);
  });
});
