import type { Pool } from 'pg';
import { fingerprintSql, FRESH_POOL_BASE, LICENSE_TYPES_BY_N, licenseKeySql, SEAT_EVERY } from './dataset';

export interface SeedProduct {
  id: number;
  code: string;
  keyPrefix: string;
  features: string[];
}

export type Progress = (done: number, total: number) => void;

const LICENSE_BATCH = 50_000;
const AUDIT_BATCH = 250_000;
const TWO_YEARS = "interval '730 days'";

export async function loadProducts(pool: Pool): Promise<SeedProduct[]> {
  const { rows } = await pool.query<{ id: number; code: string; key_prefix: string; available_features: string[] }>(
    'SELECT id, code, key_prefix, available_features FROM products ORDER BY id',
  );
  return rows.map((r) => ({ id: r.id, code: r.code, keyPrefix: r.key_prefix, features: r.available_features }));
}

/** The product of licence n (same rule in SQL below). */
export const productOf = (products: SeedProduct[], n: number) => products[n % products.length];

/**
 * Inserts licences n = from..to in batches, generated on the server side (INSERT ... SELECT
 * generate_series), each 10th one with a bound seat. `fresh` licences are all PERPETUAL, active and
 * created now: the pool for fresh activations. Otherwise types, statuses and creation times vary.
 */
export async function seedLicenses(
  pool: Pool,
  products: SeedProduct[],
  from: number,
  to: number,
  fresh: boolean,
  progress?: Progress,
): Promise<void> {
  const params = (a: number, b: number) => [
    a,
    b,
    products.length,
    [...LICENSE_TYPES_BY_N],
    products.map((p) => p.id),
    products.map((p) => p.keyPrefix),
    products.map((p) => JSON.stringify(p.features)),
    fresh,
  ];
  const sql = `
    WITH src AS (
      SELECT n, i, t, c, ${licenseKeySql('($6::text[])[i]', 'n')} AS license_key
      FROM (
        SELECT n, 1 + n % $3 AS i,
               CASE WHEN $8 THEN 'PERPETUAL' ELSE ($4::text[])[1 + n % 5] END AS t,
               CASE WHEN $8 THEN now() ELSE now() - ${TWO_YEARS} * ((n * 0.6180339887) % 1) END AS c
        FROM generate_series($1::bigint, $2::bigint) AS n
      ) g
    ), inserted AS (
      INSERT INTO licenses (product_id, license_key, license_type, customer_name, customer_email, features, grace_days,
                            expires_at, active, revoked, revoked_at, revoke_reason, created_at, updated_at)
      SELECT ($5::int[])[i], license_key, t, 'Customer ' || n || ' d.o.o.',
             CASE WHEN n % 3 = 0 THEN NULL ELSE 'office' || n || '@customer.example' END,
             ($7::jsonb[])[i], 7,
             CASE t WHEN 'PERPETUAL' THEN NULL WHEN 'TRIAL' THEN c + interval '14 days' WHEN 'MONTHLY' THEN c + interval '1 month'
                    WHEN 'QUARTERLY' THEN c + interval '3 months' ELSE c + interval '1 year' END,
             $8 OR n % 100 <> 7, NOT $8 AND n % 100 = 3,
             CASE WHEN NOT $8 AND n % 100 = 3 THEN c + interval '1 day' END,
             CASE WHEN NOT $8 AND n % 100 = 3 THEN 'Benchmark data' END, c, c
      FROM src
      RETURNING id, product_id, license_key, created_at
    )
    INSERT INTO activations (license_id, product_id, machine_fingerprint, hostname, os, app_version, ip, activated_at, last_seen_at)
    SELECT l.id, l.product_id, ${fingerprintSql('s.n')}, 'host-' || s.n, 'Linux', '1.0.0', '10.0.0.1',
           l.created_at + interval '1 hour', l.created_at + interval '1 hour'
    FROM inserted l JOIN src s ON s.license_key = l.license_key
    WHERE NOT $8 AND s.n % ${SEAT_EVERY} = 0`;
  for (let a = from; a <= to; a += LICENSE_BATCH) {
    const b = Math.min(to, a + LICENSE_BATCH - 1);
    await pool.query(sql, params(a, b));
    progress?.(b - from + 1, to - from + 1);
  }
}

/** Sequence numbers of the fresh-activation pool of scale `scale` (0, 1, ...). */
export const freshPoolStart = (scale: number) => FRESH_POOL_BASE * (scale + 1);

const SEED_ACTIONS = [
  'license.activated',
  'license.activated',
  'license.activated',
  'license.activated',
  'license.activated',
  'license.created',
  'license.created',
  'license.updated',
  'license.deactivated',
  'license.activation_denied',
];

/**
 * Appends audit entries n = from..to of `total`, oldest first, spread over the last two years,
 * with the mix of actions a busy server would have.
 */
export async function seedAudit(
  pool: Pool,
  products: SeedProduct[],
  from: number,
  to: number,
  total: number,
  progress?: Progress,
): Promise<void> {
  const sql = `
    INSERT INTO audit_entries (created_at, action, actor_type, actor, ip, license_id, product_code, details)
    SELECT now() - ${TWO_YEARS} + ${TWO_YEARS} * (n::float8 / $3), a,
           CASE WHEN a LIKE 'license.%activat%' OR a = 'license.deactivated' THEN 'client' ELSE 'admin_api' END,
           CASE WHEN a LIKE 'license.%activat%' OR a = 'license.deactivated' THEN '10.0.0.' || (n % 250) ELSE 'key:3f9a1c2b' END,
           '10.0.0.' || (n % 250), 1 + (n * 7919) % $4, ($5::text[])[1 + n % cardinality($5::text[])],
           jsonb_build_object('hostname', 'host-' || n, 'seed', n)
    FROM (SELECT n, ($6::text[])[1 + n % ${SEED_ACTIONS.length}] AS a FROM generate_series($1::bigint, $2::bigint) AS n) g`;
  const { rows } = await pool.query<{ max: number }>('SELECT coalesce(max(id), 1) AS max FROM licenses');
  const maxLicenseId = Number(rows[0].max);
  for (let a = from; a <= to; a += AUDIT_BATCH) {
    const b = Math.min(to, a + AUDIT_BATCH - 1);
    await pool.query(sql, [a, b, total, maxLicenseId, products.map((p) => p.code), SEED_ACTIONS]);
    progress?.(b - from + 1, to - from + 1);
  }
}

export interface DatasetSize {
  licenses: number;
  seats: number;
  audit: number;
}

/** Exact sizes, for the report (run between measurements, never during one). */
export async function datasetSize(pool: Pool): Promise<DatasetSize> {
  const { rows } = await pool.query<DatasetSize>(`SELECT (SELECT count(*) FROM licenses)::int AS licenses,
    (SELECT count(*) FROM activations WHERE released_at IS NULL)::int AS seats, (SELECT count(*) FROM audit_entries)::int AS audit`);
  return rows[0];
}

/**
 * Statistics and the visibility map up to date, as autovacuum would leave them after a bulk load, and the
 * load's dirty pages written out (CHECKPOINT), so the measurements do not pay for flushing millions of seeded rows.
 */
export async function vacuumAnalyze(pool: Pool): Promise<void> {
  for (const table of ['products', 'licenses', 'activations', 'audit_entries']) await pool.query(`VACUUM (ANALYZE) ${table}`);
  // CHECKPOINT needs a superuser (or pg_checkpoint): with a BENCH_DATABASE_URL of a lesser role, go on without it.
  await pool.query('CHECKPOINT').catch(() => undefined);
}
