import { createHash } from 'node:crypto';
import type { TestApp } from './test-app';
import { EventFanoutService } from '../../src/events/event-fanout.service';

/** Body of POST /api/v1/admin/licenses (docs/licences.md, Creating); every field may be overridden. */
export interface LicenseInput {
  product_code: string;
  license_type: string;
  customer_name: string;
  customer_email?: string;
  customer_pib?: string;
  limits?: Record<string, number>;
  policy?: Record<string, number | string | null>;
  features?: string[];
  grace_days?: number;
  notes?: string;
  expires_at?: string;
  notify_customer?: boolean;
}

/** The 201 body of licence creation. */
export interface CreatedLicense {
  id: number;
  license_key: string;
  message: string;
}

let sequence = 0;

/** Defaults for a valid licence: a YEARLY POS_RETAIL licence for a uniquely named customer. */
export function licenseInput(overrides: Partial<LicenseInput> = {}): LicenseInput {
  sequence += 1;
  return { product_code: 'POS_RETAIL', license_type: 'YEARLY', customer_name: `Test Customer ${sequence}`, ...overrides };
}

/** Creates a licence through the admin API and fails loudly unless it answers 201. */
export async function createLicense(t: TestApp, overrides: Partial<LicenseInput> = {}): Promise<CreatedLicense> {
  const res = await t.admin.post('/api/v1/admin/licenses').send(licenseInput(overrides));
  if (res.status !== 201) throw new Error(`createLicense: expected 201, got ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as CreatedLicense;
}

/** A valid machine fingerprint (`sha256:` + 64 lower-case hex), the same for the same seed. */
export function fingerprint(seed: string | number = Math.random()): string {
  return 'sha256:' + createHash('sha256').update(String(seed)).digest('hex');
}

export interface SeatRow {
  machine_fingerprint?: string;
  hostname?: string | null;
  os?: string | null;
  app_version?: string | null;
  ip?: string | null;
  activated_at?: Date;
  last_seen_at?: Date;
  released_at?: Date | null;
  release_reason?: 'deactivated' | 'force_released' | 'heartbeat_timeout' | null;
}

/** Inserts an activation record straight into the database (no client API involved); returns its id and fingerprint. */
export async function insertSeat(t: TestApp, licenseId: number, seat: SeatRow = {}): Promise<{ id: number; machine_fingerprint: string }> {
  const fp = seat.machine_fingerprint ?? fingerprint();
  const activatedAt = seat.activated_at ?? new Date();
  const releasedAt = seat.released_at ?? null;
  const [row] = await t.sql<{ id: string }>(
    `INSERT INTO activations (license_id, product_id, machine_fingerprint, hostname, os, app_version, ip, activated_at, last_seen_at, released_at, release_reason)
     SELECT $1, l.product_id, $2, $3, $4, $5, $6, $7, $8, $9, $10 FROM licenses l WHERE l.id = $1 RETURNING id`,
    [
      licenseId,
      fp,
      seat.hostname === undefined ? 'test-host' : seat.hostname,
      seat.os ?? null,
      seat.app_version ?? null,
      seat.ip ?? null,
      activatedAt,
      seat.last_seen_at ?? activatedAt,
      releasedAt,
      releasedAt ? (seat.release_reason ?? 'deactivated') : null,
    ],
  );
  return { id: Number(row.id), machine_fingerprint: fp };
}

/** Moves a licence's expiry (and optionally grace days) directly in the database, e.g. into the past. */
export async function setLicenseExpiry(t: TestApp, licenseId: number, expiresAt: Date | null, graceDays?: number): Promise<void> {
  if (graceDays === undefined) await t.sql('UPDATE licenses SET expires_at = $2 WHERE id = $1', [licenseId, expiresAt]);
  else await t.sql('UPDATE licenses SET expires_at = $2, grace_days = $3 WHERE id = $1', [licenseId, expiresAt, graceDays]);
}

/** An air-gapped machine's activation request: the /activate body, base64 in 64-character lines between markers (docs/licences.md, Offline use and air-gapped machines). */
/**
 * The audit entries written by a request (everything but the schedules' own, actor `system`: the expiry scan and the
 * seat sweep may write while a test runs on a busy machine). A test that shows a rejected request wrote nothing counts
 * these before and after it.
 */
export async function requestAuditCount(t: TestApp): Promise<number> {
  return (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM audit_entries WHERE actor_type <> 'system'`))[0].n;
}

export function activationRequest(body: unknown): string {
  const lines =
    Buffer.from(JSON.stringify(body), 'utf8')
      .toString('base64')
      .match(/.{1,64}/g) ?? [];
  return ['-----BEGIN ACTIVATION REQUEST-----', ...lines, '-----END ACTIVATION REQUEST-----', ''].join('\n');
}

/**
 * Waits until every committed event has been fanned out to its endpoints (docs/webhooks.md, The event spine): the
 * fan-out runs after commit, so a test that reads deliveries right after a change runs a pass itself and waits for
 * any pass the background poll holds.
 */
export async function fannedOut(t: TestApp, timeoutMs = 10_000): Promise<void> {
  const fanout = t.app.get(EventFanoutService);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await fanout.fanOutPending();
    const [{ pending }] = await t.sql<{ pending: number }>('SELECT count(*)::int AS pending FROM event_outbox WHERE fanned_out_at IS NULL');
    if (pending === 0) return;
    if (Date.now() > deadline) throw new Error(`${pending} events still not fanned out after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Requests sent with a token as `Authorization: Bearer` (admin tokens, docs/admin-api.md). */
export function asBearer(t: TestApp, token: string) {
  return {
    get: (url: string) => t.http().get(url).set('Authorization', `Bearer ${token}`),
    post: (url: string) => t.http().post(url).set('Authorization', `Bearer ${token}`),
    put: (url: string) => t.http().put(url).set('Authorization', `Bearer ${token}`),
    delete: (url: string) => t.http().delete(url).set('Authorization', `Bearer ${token}`),
  };
}
