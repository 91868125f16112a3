import type { TestApp } from './test-app';

/** A store-made licence as the admin GET shows it. */
export type StoreLicense = Record<string, unknown> & {
  id: number;
  expires_at: string;
  limit_overrides: Record<string, number>;
  status: string;
  license_key: string;
};

/** The licence a store subscription made, as the admin GET shows it; undefined while none exists. */
export async function storeLicense(t: TestApp, store: string, subscriptionId: string | number): Promise<StoreLicense | undefined> {
  const [row] = await t.sql<{ id: number }>('SELECT id FROM licenses WHERE store_name = $1 AND store_subscription_id = $2', [
    store,
    String(subscriptionId),
  ]);
  if (!row) return undefined;
  return (await t.admin.get(`/api/v1/admin/licenses/${row.id}`).expect(200)).body as StoreLicense;
}

/** How many audit entries or outbox rows name the licence (a replay must add none). */
export function rowsOfLicense(t: TestApp, table: 'audit_entries' | 'event_outbox', licenseId: number): Promise<number> {
  return t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE license_id = $1`, [licenseId]).then((r) => r[0].n);
}

export const storeEventCount = (t: TestApp) => t.sql<{ n: number }>('SELECT count(*)::int AS n FROM store_events').then((r) => r[0].n);

/** Posts a raw body to a store endpoint with (or without) a signature header: [status, error code]. */
export async function signedAnswer(
  t: TestApp,
  path: string,
  header: string,
  signature: string | undefined,
  raw: string,
): Promise<[number, string | undefined]> {
  const req = t.http().post(path).set('Content-Type', 'application/json');
  if (signature !== undefined) req.set(header, signature);
  const res = await req.send(raw);
  return [res.status, (res.body as { error?: { code?: string } }).error?.code];
}
