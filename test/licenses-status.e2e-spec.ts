import { deriveLicenseStatus, LICENSE_STATUSES, licenseStatusConditionSql, licenseStatusSql } from '../src/licenses/license-status';
import { createTestApp, TestApp } from './support/test-app';

const DAY_MS = 86_400_000;

/**
 * The status rule exists twice: deriveLicenseStatus (TypeScript, single licences) and
 * licenseStatusSql / licenseStatusConditionSql (lists, filters, statistics). They must agree,
 * exactly at the boundaries too, which only a fixed reference time can check.
 */
describe('licence status: SQL and TypeScript agree', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp()), 60_000);
  afterAll(() => t.close());

  const now = new Date('2026-06-15T12:00:00.000Z');
  const offsets = (graceDays: number) => {
    const grace = graceDays * DAY_MS;
    return [null, -grace - 1000, -grace - 1, -grace, -grace + 1, -DAY_MS, -1, 0, 1, DAY_MS, 400 * DAY_MS];
  };

  it('for a matrix of flags, expiries and grace days, at and around every boundary', async () => {
    const cases: { revoked: boolean; active: boolean; expiresAt: Date | null; graceDays: number }[] = [];
    for (const revoked of [false, true])
      for (const active of [true, false])
        for (const graceDays of [0, 1, 7, 365])
          for (const offset of offsets(graceDays))
            cases.push({ revoked, active, graceDays, expiresAt: offset === null ? null : new Date(now.getTime() + offset) });

    const [{ id: productId }] = await t.sql<{ id: number }>(`SELECT id FROM products WHERE code = 'POS_RETAIL'`);
    const rows = await t.sql<{ id: number }>(
      `INSERT INTO licenses (product_id, license_key, license_type, customer_name, revoked, active, grace_days, expires_at)
       SELECT $1, 'MX-' || lpad(i::text, 5, '0') || '-AAAAA-AAAAA-AAAAA', 'YEARLY', 'Matrix ' || i, c.revoked, c.active, c.grace_days, c.expires_at
       FROM jsonb_to_recordset($2::jsonb) AS c(revoked boolean, active boolean, grace_days int, expires_at timestamptz, i int)
       RETURNING id`,
      [
        productId,
        JSON.stringify(
          cases.map((c, i) => ({
            i,
            revoked: c.revoked,
            active: c.active,
            grace_days: c.graceDays,
            expires_at: c.expiresAt?.toISOString() ?? null,
          })),
        ),
      ],
    );
    expect(rows).toHaveLength(cases.length);

    const conditions = LICENSE_STATUSES.map((s) => `(${licenseStatusConditionSql('l', s, '$1::timestamptz')}) AS "is_${s}"`).join(', ');
    const computed = await t.sql<
      Record<string, unknown> & { revoked: boolean; active: boolean; grace_days: number; expires_at: Date | null }
    >(
      `SELECT l.revoked, l.active, l.grace_days, l.expires_at, ${licenseStatusSql('l', '$1::timestamptz')} AS status, ${conditions}
       FROM licenses l WHERE l.customer_name LIKE 'Matrix %' ORDER BY l.id`,
      [now.toISOString()],
    );
    expect(computed).toHaveLength(cases.length);
    for (const row of computed) {
      const expected = deriveLicenseStatus(
        { revoked: row.revoked, active: row.active, graceDays: row.grace_days, expiresAt: row.expires_at },
        now,
      );
      const label = JSON.stringify({ ...row, expected });
      expect([label, row.status]).toEqual([label, expected]);
      // Exactly one status condition holds, and it is the derived one.
      expect([label, LICENSE_STATUSES.filter((s) => row[`is_${s}`])]).toEqual([label, [expected]]);
    }
    // The matrix reaches every status.
    expect(new Set(computed.map((r) => r.status))).toEqual(new Set(LICENSE_STATUSES));
  });
});
