import fc from 'fast-check';
import { Client } from 'pg';
import {
  deriveLicenseStatus,
  LICENSE_STATUSES,
  licenseStatusConditionSql,
  licenseStatusSql,
  LicenseStatus,
  isUsableStatus,
  licenseUsableSql,
} from '../src/licenses/license-status';
import { isSeatDead, mergeLimits, seatLimit } from '../src/licenses/license-limits';
import { mergedPolicySql, mergePolicy, POLICY_KEYS } from '../src/common/seat-policy/license-policy';
import type { QueryRunner } from 'typeorm';
import { OneStatusRule1796800000000 } from '../src/database/migrations/1796800000000-one-status-rule';
import { createDatabaseFromTemplate, dropDatabase, ENV_ADMIN_URL, ENV_TEMPLATE, newDatabaseName } from './support/test-database';

const DAY_MS = 86_400_000;
const RUNS = 10_000;
const SEED = Number(process.env.PROPERTY_SEED ?? Date.now() % 2 ** 31);

/** Instants that make the rule's edges likely: month ends, 29 February, daylight-saving changes in Belgrade and New York. */
const ANCHORS = [
  '2024-02-28T23:00:00Z', // the leap day's eve in Belgrade
  '2024-02-29T12:00:00Z',
  '2023-02-28T23:59:59.999Z',
  '2024-03-31T00:59:59.999Z', // Europe/Belgrade springs forward at 01:00 UTC
  '2024-03-31T01:00:00Z',
  '2024-10-27T00:30:00Z', // and falls back at 01:00 UTC
  '2024-03-10T06:59:59.999Z', // America/New_York springs forward at 07:00 UTC
  '2024-11-03T05:30:00Z', // and falls back at 06:00 UTC
  '2025-01-31T22:00:00Z',
  '2025-04-30T23:30:00Z',
  '2025-12-31T23:59:59.999Z',
  '2026-06-30T22:00:00Z',
].map((t) => Date.parse(t));

interface StatusCase {
  revoked: boolean;
  active: boolean;
  expiresAt: number | null;
  graceDays: number;
  at: number;
}

/** An expiry near an anchor, and a reference time at one of the rule's boundaries ±1 ms, or anywhere around it. */
const statusCase: fc.Arbitrary<StatusCase> = fc
  .record({
    revoked: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
    active: fc.integer({ min: 0, max: 9 }).map((n) => n > 0),
    anchor: fc.constantFrom(...ANCHORS),
    expiryShift: fc.integer({ min: -40 * DAY_MS, max: 40 * DAY_MS }),
    never: fc.integer({ min: 0, max: 19 }).map((n) => n === 0),
    graceDays: fc.oneof(fc.integer({ min: 0, max: 365 }), fc.constantFrom(0, 1, 7, 30, 365)),
    boundary: fc.constantFrom('expiry', 'graceEnd', 'free'),
    nudge: fc.constantFrom(-1, 0, 1),
    free: fc.integer({ min: -400 * DAY_MS, max: 800 * DAY_MS }),
  })
  .map(({ revoked, active, anchor, expiryShift, never, graceDays, boundary, nudge, free }) => {
    const expiresAt = anchor + expiryShift;
    const at =
      boundary === 'expiry' ? expiresAt + nudge : boundary === 'graceEnd' ? expiresAt + graceDays * DAY_MS + nudge : expiresAt + free;
    return { revoked, active, graceDays, expiresAt: never ? null : expiresAt, at };
  });

interface SeatCase {
  defaultLimits: Record<string, unknown>;
  limits: Record<string, unknown>;
  defaultPolicy: Record<string, unknown>;
  policy: Record<string, unknown>;
  lastSeenAt: number;
  at: number;
}

const limitValue = fc.oneof(
  fc.integer({ min: 0, max: 50 }),
  fc.constantFrom(0, 1, 2_147_483_647, 2_147_483_648, -1, 1.5, 'three', null, true),
);
const maybeLimits = fc.option(fc.record({ max_installations: limitValue }, { requiredKeys: [] }), { nil: undefined });
const timeout = fc.oneof(fc.integer({ min: 10, max: 604_800 }), fc.constant(null));
const maybePolicy = fc.option(fc.record({ heartbeat_timeout_seconds: timeout }, { requiredKeys: [] }), { nil: undefined });

const seatCase: fc.Arbitrary<SeatCase> = fc
  .record({
    defaultLimits: maybeLimits,
    limits: maybeLimits,
    defaultPolicy: maybePolicy,
    policy: maybePolicy,
    anchor: fc.constantFrom(...ANCHORS),
    silence: fc.integer({ min: 0, max: 700_000_000 }),
    boundary: fc.boolean(),
    nudge: fc.constantFrom(-1, 0, 1),
  })
  .map(({ defaultLimits, limits, defaultPolicy, policy, anchor, silence, boundary, nudge }) => {
    const merged = mergePolicy(defaultPolicy, policy).heartbeat_timeout_seconds;
    // At the boundary: silent for exactly the merged timeout, ±1 ms.
    const lastSeenAt = boundary && merged !== null ? anchor - merged * 1000 + nudge : anchor - silence;
    return {
      defaultLimits: defaultLimits ?? {},
      limits: limits ?? {},
      defaultPolicy: defaultPolicy ?? {},
      policy: policy ?? {},
      lastSeenAt,
      at: anchor,
    };
  });

/**
 * The status rule and the seat rules exist once in TypeScript and once in SQL (docs/licences.md, Status and grace;
 * Seat limit and dead seats). 10,000 random cases each, evaluated by PostgreSQL in one query over unnest() of arrays,
 * in sessions whose time zone has daylight-saving changes: the two sides must agree on every case.
 */
describe('licence rules: TypeScript and SQL agree (property)', () => {
  const adminUrl = process.env[ENV_ADMIN_URL] as string;
  const databaseName = newDatabaseName('rules');
  let client: Client;

  beforeAll(async () => {
    const url = await createDatabaseFromTemplate(adminUrl, process.env[ENV_TEMPLATE] as string, databaseName);
    client = new Client({ connectionString: url });
    await client.connect();
  }, 60_000);

  afterAll(async () => {
    await client?.end();
    await dropDatabase(adminUrl, databaseName);
  }, 60_000);

  const sample = <T>(arb: fc.Arbitrary<T>, seed: number) => fc.sample(arb, { numRuns: RUNS, seed });

  /** Per case: license_status() and every status condition, evaluated with the cases as unnest()ed columns. */
  async function sqlStatuses(
    cases: StatusCase[],
  ): Promise<{ status: LicenseStatus; matches: LicenseStatus[]; graceEnd: string | null; usable: boolean }[]> {
    const conditions = LICENSE_STATUSES.map((s) => `(${licenseStatusConditionSql('c', s, 'c.at')}) AS "is_${s}"`).join(', ');
    const { rows } = await client.query<Record<string, unknown> & { status: LicenseStatus; grace_end: string | null; usable: boolean }>(
      `SELECT ${licenseStatusSql('c', 'c.at')} AS status, ${conditions}, (${licenseUsableSql('c', 'c.at')}) AS usable,
              to_char(license_grace_end(c.expires_at, c.grace_days) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS grace_end
       FROM unnest($1::boolean[], $2::boolean[], $3::timestamptz[], $4::int[], $5::timestamptz[])
            WITH ORDINALITY AS c(revoked, active, expires_at, grace_days, at, i)
       ORDER BY c.i`,
      [
        cases.map((c) => c.revoked),
        cases.map((c) => c.active),
        cases.map((c) => (c.expiresAt === null ? null : new Date(c.expiresAt).toISOString())),
        cases.map((c) => c.graceDays),
        cases.map((c) => new Date(c.at).toISOString()),
      ],
    );
    return rows.map((r) => ({
      status: r.status,
      matches: LICENSE_STATUSES.filter((s) => r[`is_${s}`] === true),
      graceEnd: r.grace_end,
      usable: r.usable,
    }));
  }

  for (const zone of ['Europe/Belgrade', 'America/New_York']) {
    it(`status: ${RUNS} cases in a session in ${zone} (seed ${SEED})`, async () => {
      await client.query(`SET TIME ZONE '${zone}'`);
      const cases = sample(statusCase, SEED);
      const sql = await sqlStatuses(cases);
      const disagreements = cases
        .map((c, i) => {
          const fields = {
            revoked: c.revoked,
            active: c.active,
            graceDays: c.graceDays,
            expiresAt: c.expiresAt === null ? null : new Date(c.expiresAt),
          };
          const ts = deriveLicenseStatus(fields, new Date(c.at));
          const graceEnd = c.expiresAt === null ? null : new Date(c.expiresAt + c.graceDays * DAY_MS).toISOString();
          const agree =
            sql[i].status === ts &&
            sql[i].matches.length === 1 &&
            sql[i].matches[0] === ts &&
            sql[i].graceEnd === graceEnd &&
            sql[i].usable === isUsableStatus(ts);
          return agree
            ? null
            : { case: { ...c, expiresAt: fields.expiresAt?.toISOString() ?? null, at: new Date(c.at).toISOString() }, ts, sql: sql[i] };
        })
        .filter((d) => d !== null);
      expect(disagreements.slice(0, 5)).toEqual([]);
      // The sample reached every status and both sides of both boundaries.
      const seen = new Set(sql.map((r) => r.status));
      expect([...seen].sort()).toEqual([...LICENSE_STATUSES].sort());
      expect(new Set(sql.map((r) => r.usable))).toEqual(new Set([true, false]));
    });
  }

  it('status: grace days are 24 hours across a daylight-saving change, not calendar days', async () => {
    await client.query(`SET TIME ZONE 'Europe/Belgrade'`);
    // Expires the day before Belgrade springs forward; one grace day later is 24 hours later, an hour past local midnight+1.
    const expiresAt = Date.parse('2024-03-30T12:00:00Z');
    const atGraceEnd = expiresAt + DAY_MS;
    const cases: StatusCase[] = [
      { revoked: false, active: true, graceDays: 1, expiresAt, at: atGraceEnd },
      { revoked: false, active: true, graceDays: 1, expiresAt, at: atGraceEnd + 1 },
      // A calendar day in Belgrade would end an hour earlier: that hour is still grace.
      { revoked: false, active: true, graceDays: 1, expiresAt, at: atGraceEnd - 30 * 60_000 },
    ];
    expect((await sqlStatuses(cases)).map((r) => r.status)).toEqual(['grace', 'expired', 'grace']);
    expect(cases.map((c) => deriveLicenseStatus({ ...c, expiresAt: new Date(expiresAt) }, new Date(c.at)))).toEqual([
      'grace',
      'expired',
      'grace',
    ]);
  });

  for (const zone of ['Europe/Belgrade', 'America/New_York']) {
    it(`seat limit and dead seats: ${RUNS} cases in a session in ${zone} (seed ${SEED})`, async () => {
      await client.query(`SET TIME ZONE '${zone}'`);
      const cases = sample(seatCase, SEED + 1);
      const { rows } = await client.query<{ seat_limit: number; timeout: number | null; dead: boolean }>(
        `SELECT license_seat_limit(c.default_limits, c.limits) AS seat_limit,
                license_heartbeat_timeout(c.default_policy, c.policy) AS timeout,
                seat_is_dead(c.last_seen_at, license_heartbeat_timeout(c.default_policy, c.policy), c.at) AS dead
         FROM unnest($1::jsonb[], $2::jsonb[], $3::jsonb[], $4::jsonb[], $5::timestamptz[], $6::timestamptz[])
              WITH ORDINALITY AS c(default_limits, limits, default_policy, policy, last_seen_at, at, i)
         ORDER BY c.i`,
        [
          cases.map((c) => JSON.stringify(c.defaultLimits)),
          cases.map((c) => JSON.stringify(c.limits)),
          cases.map((c) => JSON.stringify(c.defaultPolicy)),
          cases.map((c) => JSON.stringify(c.policy)),
          cases.map((c) => new Date(c.lastSeenAt).toISOString()),
          cases.map((c) => new Date(c.at).toISOString()),
        ],
      );
      const disagreements = cases
        .map((c, i) => {
          const limit = seatLimit(mergeLimits(c.defaultLimits as never, c.limits as never));
          const timeoutSeconds = mergePolicy(c.defaultPolicy, c.policy).heartbeat_timeout_seconds;
          const dead = isSeatDead(new Date(c.lastSeenAt), timeoutSeconds, new Date(c.at));
          const ts = { seat_limit: limit, timeout: timeoutSeconds, dead };
          return JSON.stringify(ts) === JSON.stringify(rows[i]) ? null : { case: c, ts, sql: rows[i] };
        })
        .filter((d) => d !== null);
      expect(disagreements.slice(0, 5)).toEqual([]);
      expect(new Set(rows.map((r) => r.dead))).toEqual(new Set([true, false]));
    });
  }

  it(`policy merge: mergedPolicySql agrees with mergePolicy on ${RUNS} product defaults and licence overrides (seed ${SEED})`, async () => {
    const value = fc.oneof(fc.integer({ min: 0, max: 1_000_000 }), fc.constantFrom(null, 'month', 'none'));
    const overrides = fc.option(fc.dictionary(fc.constantFrom(...POLICY_KEYS), value), { nil: null });
    const cases = sample(fc.record({ defaults: overrides, own: overrides }), SEED + 3);
    const { rows } = await client.query<{ policy: Record<string, unknown> }>(
      `SELECT ${mergedPolicySql('c.defaults', 'c.own')} AS policy
       FROM unnest($1::jsonb[], $2::jsonb[]) WITH ORDINALITY AS c(defaults, own, i) ORDER BY c.i`,
      [
        cases.map((c) => (c.defaults === null ? null : JSON.stringify(c.defaults))),
        cases.map((c) => (c.own === null ? null : JSON.stringify(c.own))),
      ],
    );
    const disagreements = cases
      .map((c, i) => {
        const ts = mergePolicy(c.defaults, c.own);
        const sorted = (o: Record<string, unknown>) =>
          JSON.stringify(Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b))));
        return sorted(ts as unknown as Record<string, unknown>) === sorted(rows[i].policy) ? null : { case: c, ts, sql: rows[i].policy };
      })
      .filter((d) => d !== null);
    expect(disagreements.slice(0, 5)).toEqual([]);
  });

  it('seat limit: what an attacker could store instead of a whole number gives one seat on both sides', async () => {
    const hostile: unknown[] = [-1, 1.5, 2_147_483_648, 1e300, 'unlimited', null, true, [5], { n: 5 }];
    const { rows } = await client.query<{ n: number }>(
      `SELECT license_seat_limit('{"max_installations": 9}'::jsonb, jsonb_build_object('max_installations', v)) AS n
       FROM unnest($1::jsonb[]) WITH ORDINALITY AS u(v, i) ORDER BY i`,
      [hostile.map((v) => JSON.stringify(v))],
    );
    expect(rows.map((r) => r.n)).toEqual(hostile.map(() => 1));
    expect(hostile.map((v) => seatLimit({ max_installations: v }))).toEqual(hostile.map(() => 1));
  });

  it('the rules are IMMUTABLE functions, and their migration reverts and re-applies cleanly', async () => {
    const rules = ['license_status', 'license_grace_end', 'license_seat_limit', 'license_heartbeat_timeout', 'seat_is_dead'];
    const volatility = async () =>
      (
        await client.query<{ proname: string; provolatile: string; lanname: string }>(
          `SELECT p.proname, p.provolatile, l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
           WHERE p.proname = ANY($1::text[]) ORDER BY p.proname`,
          [rules],
        )
      ).rows;
    const applied = rules
      .map((proname) => ({ proname, provolatile: 'i', lanname: 'sql' }))
      .sort((a, b) => a.proname.localeCompare(b.proname));
    expect(await volatility()).toEqual(applied);

    // The migration only needs query(): a pg client stands in for TypeORM's runner.
    const runner = { query: (text: string) => client.query(text).then((r) => r.rows) } as unknown as QueryRunner;
    const migration = new OneStatusRule1796800000000();
    // The statistics' rows per licence are the same before and after: counters kept by the old ones stay exact.
    const cases = sample(statusCase, SEED + 2).slice(0, 2000);
    const statRows = async () =>
      (
        await client.query<{ rows: unknown }>(
          `SELECT (SELECT json_agg(s ORDER BY s.metric) FROM license_stat_rows(1, 'YEARLY', c.revoked, c.active, c.expires_at, c.grace_days) s) AS rows
           FROM unnest($1::boolean[], $2::boolean[], $3::timestamptz[], $4::int[]) WITH ORDINALITY AS c(revoked, active, expires_at, grace_days, i)
           ORDER BY c.i`,
          [
            cases.map((c) => c.revoked),
            cases.map((c) => c.active),
            cases.map((c) => (c.expiresAt === null ? null : new Date(c.expiresAt).toISOString())),
            cases.map((c) => c.graceDays),
          ],
        )
      ).rows.map((r) => r.rows);
    const withRule = await statRows();
    await client.query('BEGIN');
    try {
      await migration.down(runner);
      expect(await volatility()).toEqual([{ proname: 'license_grace_end', provolatile: 'i', lanname: 'plpgsql' }]);
      expect(await statRows()).toEqual(withRule);
      await migration.up(runner);
      expect(await volatility()).toEqual(applied);
      const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM usable_license_deadlines`);
      expect(rows[0].n).toBeGreaterThanOrEqual(0);
    } finally {
      await client.query('ROLLBACK');
    }
  });
});
