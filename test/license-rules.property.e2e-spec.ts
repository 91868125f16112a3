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
import { mergedPolicySql, mergePolicy, POLICY_KEYS, type PolicyOverrides } from '../src/common/seat-policy/license-policy';
import { DataSource, type QueryRunner } from 'typeorm';
import { dataSourceOptions } from '../src/database/data-source-options';
import { decideUsage, usagePeriod, usesIn } from '../src/licenses/usage/usage-decisions';
import { type CountedBelowCap, UsageRepository } from '../src/licenses/usage/usage.repository';
import { OneStatusRule1796800000000 } from '../src/database/migrations/1796800000000-one-status-rule';
import { createDatabaseFromTemplate, dropDatabase, ENV_ADMIN_URL, ENV_TEMPLATE, newDatabaseName } from './support/test-database';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const RUNS = 10_000;
/** license_stat_rows returns a set per licence (json_agg per case): fewer cases, both zones. */
const STAT_RUNS = 2_000;
/** countBelowCap is one statement per case on real rows: a few hundred calls. */
const USAGE_RUNS = 400;
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

/** The cases as the four arrays `unnest($1, $2, $3, $4)` reads: revoked, active, expires_at, grace_days. */
const statusCaseColumns = (cases: StatusCase[]) => [
  cases.map((c) => c.revoked),
  cases.map((c) => c.active),
  cases.map((c) => (c.expiresAt === null ? null : new Date(c.expiresAt).toISOString())),
  cases.map((c) => c.graceDays),
];

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
  let databaseUrl: string;

  beforeAll(async () => {
    const url = await createDatabaseFromTemplate(adminUrl, process.env[ENV_TEMPLATE] as string, databaseName);
    databaseUrl = url;
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

  /** A UTC hour as the statistics bucket it: `YYYY-MM-DDTHH:00:00Z`. */
  const utcHour = (ms: number) => `${new Date(ms).toISOString().slice(0, 13)}:00:00Z`;

  /**
   * license_stat_rows by its rule (docs/licences.md, Statistics): a `type:<TYPE>` row; the flags' status, `revoked`,
   * `suspended` or `usable` (deriveLicenseStatus without an expiry); and for a usable licence that expires, its expiry
   * (`expires`) and grace end (`grace_ends`) as events of their UTC hour. Sorted by metric, as the query returns them.
   */
  function statRowsByRule(c: StatusCase): { metric: string; hour: string | null }[] {
    const flags = deriveLicenseStatus({ revoked: c.revoked, active: c.active, expiresAt: null, graceDays: c.graceDays });
    const rows = [
      { metric: 'type:YEARLY', hour: null as string | null },
      { metric: flags === 'active' ? 'usable' : flags, hour: null },
    ];
    if (flags === 'active' && c.expiresAt !== null) {
      rows.push(
        { metric: 'expires', hour: utcHour(c.expiresAt) },
        { metric: 'grace_ends', hour: utcHour(c.expiresAt + c.graceDays * DAY_MS) },
      );
    }
    return rows.sort((a, b) => (a.metric < b.metric ? -1 : 1));
  }

  /**
   * The status GET /stats counts one licence under at `at`, from its rows (StatsService.productStats): `usable` minus
   * the expiries passed is active, passed minus grace ends passed is grace. An hour before `at`'s counts from its
   * bucket; `at`'s own hour from the licence's instants (strictly before `at`), as productCountersSql does.
   */
  function statusFromRows(rows: { metric: string; hour: string | null }[], c: StatusCase): LicenseStatus {
    const hourOfAt = utcHour(c.at);
    const passed = (metric: string, instant: number) =>
      rows.filter((r) => r.metric === metric && r.hour !== null && (r.hour < hourOfAt || (r.hour === hourOfAt && instant < c.at))).length;
    const has = (metric: string) => rows.some((r) => r.metric === metric);
    if (has('revoked')) return 'revoked';
    if (has('suspended')) return 'suspended';
    const expiresAt = c.expiresAt ?? 0;
    const expires = passed('expires', expiresAt);
    const graceEnds = passed('grace_ends', expiresAt + c.graceDays * DAY_MS);
    return graceEnds === 1 ? 'expired' : expires - graceEnds === 1 ? 'grace' : 'active';
  }

  for (const zone of ['Europe/Belgrade', 'America/New_York']) {
    it(`statistics: license_stat_rows follows its rule, and counts each licence under deriveLicenseStatus, on ${STAT_RUNS} cases in ${zone} (seed ${SEED})`, async () => {
      await client.query(`SET TIME ZONE '${zone}'`);
      const cases = sample(statusCase, SEED + 4).slice(0, STAT_RUNS);
      const { rows } = await client.query<{ rows: { metric: string; hour: string | null }[] }>(
        `SELECT (SELECT json_agg(json_build_object('metric', s.metric, 'hour', to_char(s.hour, 'YYYY-MM-DD"T"HH24:MI:SS"Z"')) ORDER BY s.metric)
                 FROM license_stat_rows(1, 'YEARLY', c.revoked, c.active, c.expires_at, c.grace_days) s) AS rows
         FROM unnest($1::boolean[], $2::boolean[], $3::timestamptz[], $4::int[]) WITH ORDINALITY AS c(revoked, active, expires_at, grace_days, i)
         ORDER BY c.i`,
        statusCaseColumns(cases),
      );
      const disagreements = cases
        .map((c, i) => {
          const rule = statRowsByRule(c);
          const ts = deriveLicenseStatus({ ...c, expiresAt: c.expiresAt === null ? null : new Date(c.expiresAt) }, new Date(c.at));
          const counted = statusFromRows(rows[i].rows, c);
          return JSON.stringify(rows[i].rows) === JSON.stringify(rule) && counted === ts
            ? null
            : {
                case: { ...c, expiresAt: c.expiresAt && new Date(c.expiresAt).toISOString(), at: new Date(c.at).toISOString() },
                rule,
                sql: rows[i].rows,
                ts,
                counted,
              };
        })
        .filter((d) => d !== null);
      expect(disagreements.slice(0, 5)).toEqual([]);
      // Every status was counted, and some expiries and grace ends fell in the hour of `at` (the boundary cases).
      expect(new Set(cases.map((c, i) => statusFromRows(rows[i].rows, c)))).toEqual(new Set(LICENSE_STATUSES));
      const sameHour = cases.filter((c) => c.expiresAt !== null && utcHour(c.expiresAt) === utcHour(c.at));
      expect(sameHour.length).toBeGreaterThan(0);
    });
  }

  /**
   * UsageRepository.countBelowCap holds decideUsage's conditions in SQL (docs/licences.md, Usage metering: one round
   * trip for the common case). On real rows: it counts exactly when decideUsage says `count` and the period's count
   * plus the increment stays below the cap, into the period usagePeriod() names, and otherwise writes nothing.
   */
  describe(`usage: countBelowCap agrees with decideUsage on ${USAGE_RUNS} licences (seed ${SEED})`, () => {
    let dataSource: DataSource;
    let usage: UsageRepository;

    beforeAll(async () => {
      // A session in a zone with daylight-saving changes: month starts are passed as instants and must not move.
      const url = new URL(databaseUrl);
      url.searchParams.set('options', '-c TimeZone=Europe/Belgrade');
      dataSource = await new DataSource(dataSourceOptions(url.toString(), 2)).initialize();
      usage = new UsageRepository(dataSource);
    }, 60_000);

    afterAll(async () => {
      await dataSource?.destroy();
    });

    /** Product defaults the licences inherit (product i has PRODUCT_POLICIES[i]); null values are the product's own "never". */
    const PRODUCT_POLICIES: PolicyOverrides[] = [
      {},
      { max_uses: 20 },
      { max_uses: 20, uses_period: 'month' },
      { max_uses: null, uses_period: 'month' },
      { max_uses: 5, heartbeat_timeout_seconds: 600 },
      { max_uses: 1_000_000_000_000, heartbeat_timeout_seconds: null },
    ];
    const MARGIN_MS = 5 * 60_000;

    interface UsageCase {
      unknownKey: boolean;
      product: number;
      policy: PolicyOverrides;
      revoked: boolean;
      active: boolean;
      expiresAt: number | null;
      graceDays: number;
      createdAt: number;
      seat: 'none' | 'released' | 'other machine' | 'fresh' | 'before timeout' | 'after timeout' | 'long silent';
      counter: 'none' | 'this period' | 'another period';
      uses: number;
      increment: number;
      /** `cap`: the period's count plus the increment lands on the cap ±1 (through the stored count, or the increment alone). */
      edge: 'free' | 'cap';
      nudge: number;
    }

    /** A case relative to `now`: the status at its edges ±1 ms; seats at least MARGIN_MS from dying (the seat check uses the database's now()). */
    const usageCase = (now: number): fc.Arbitrary<UsageCase> =>
      fc
        .record({
          unknownKey: fc.integer({ min: 0, max: 19 }).map((n) => n === 0),
          product: fc.integer({ min: 0, max: PRODUCT_POLICIES.length - 1 }),
          // Each override set on half the licences (a licence stores no null: null clears its override).
          policy: fc
            .record({
              max_uses: fc.option(fc.oneof(fc.integer({ min: 1, max: 30 }), fc.constant(1_000_000_000_000)), { nil: undefined, freq: 1 }),
              uses_period: fc.option(fc.constantFrom('none' as const, 'month' as const), { nil: undefined, freq: 1 }),
              heartbeat_timeout_seconds: fc.option(fc.constantFrom(600, 3_600, 604_800), { nil: undefined, freq: 1 }),
            })
            .map((p): PolicyOverrides => Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined))),
          revoked: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
          active: fc.integer({ min: 0, max: 9 }).map((n) => n > 0),
          never: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
          graceDays: fc.constantFrom(0, 1, 7, 30),
          boundary: fc.constantFrom('expiry', 'graceEnd', 'free'),
          nudge: fc.constantFrom(-1, 0, 1),
          free: fc.integer({ min: -60 * DAY_MS, max: 60 * DAY_MS }),
          age: fc.integer({ min: HOUR_MS, max: 400 * DAY_MS }),
          // A live seat in more than half of the cases, so the cap's edges are reached often.
          seat: fc.oneof(
            { weight: 3, arbitrary: fc.constantFrom('fresh' as const, 'before timeout' as const) },
            {
              weight: 2,
              arbitrary: fc.constantFrom(
                'none' as const,
                'released' as const,
                'other machine' as const,
                'after timeout' as const,
                'long silent' as const,
              ),
            },
          ),
          counter: fc.constantFrom('none' as const, 'this period' as const, 'this period' as const, 'another period' as const),
          uses: fc.integer({ min: 0, max: 40 }),
          increment: fc.oneof(fc.integer({ min: 1, max: 10 }), fc.integer({ min: 1, max: 1_000_000 })),
          edge: fc.constantFrom('free' as const, 'cap' as const, 'cap' as const),
          capNudge: fc.constantFrom(-1, 0, 0, 1),
        })
        .map(({ never, boundary, nudge, free, age, graceDays, capNudge, ...c }) => {
          // The licence is at the edge of its status at `now`: expiry or grace end ±1 ms, or anywhere around it.
          const expiresAt = boundary === 'expiry' ? now + nudge : boundary === 'graceEnd' ? now - graceDays * DAY_MS + nudge : now + free;
          return { ...c, graceDays, nudge: capNudge, expiresAt: never ? null : expiresAt, createdAt: now - age };
        });

    it('counts exactly when decideUsage counts below the cap, in the period usagePeriod() names; otherwise writes nothing', async () => {
      const now = new Date();
      const monthStart = usagePeriod({ uses_period: 'month' }, now, now).start;
      const cases = fc.sample(usageCase(now.getTime()), { numRuns: USAGE_RUNS, seed: SEED + 5 });
      const tag = `${SEED}`.slice(-6);

      const { rows: products } = await client.query<{ id: number }>(
        `INSERT INTO products (code, name, key_prefix, default_policy)
         SELECT 'USAGE_PROP_' || i, 'Usage property ' || i, 'UP' || i, p
         FROM unnest($1::jsonb[]) WITH ORDINALITY AS u(p, i) ORDER BY i RETURNING id`,
        [PRODUCT_POLICIES.map((p) => JSON.stringify(p))],
      );
      const keys = cases.map((_, i) => `UP-${tag}-${i}`);
      const { rows: licences } = await client.query<{ id: number; license_key: string }>(
        `INSERT INTO licenses (product_id, license_key, license_type, customer_name, revoked, active, expires_at, grace_days, policy, created_at)
         SELECT product_id, license_key, 'YEARLY', 'Usage property', revoked, active, expires_at, grace_days, policy, created_at
         FROM unnest($1::int[], $2::text[], $3::boolean[], $4::boolean[], $5::timestamptz[], $6::int[], $7::jsonb[], $8::timestamptz[])
              AS u(product_id, license_key, revoked, active, expires_at, grace_days, policy, created_at)
         RETURNING id, license_key`,
        [
          cases.map((c) => products[c.product].id),
          keys,
          cases.map((c) => c.revoked),
          cases.map((c) => c.active),
          cases.map((c) => (c.expiresAt === null ? null : new Date(c.expiresAt).toISOString())),
          cases.map((c) => c.graceDays),
          cases.map((c) => JSON.stringify(c.policy)),
          cases.map((c) => new Date(c.createdAt).toISOString()),
        ],
      );
      const idOf = new Map(licences.map((l) => [l.license_key, l.id]));
      const fingerprint = (i: number) => `prop-usage-${tag}-${i}`;

      // Per case: its merged policy, seat, and the counter it starts with.
      const prepared = cases.map((c, i) => {
        const policy = mergePolicy(PRODUCT_POLICIES[c.product], c.policy);
        const timeoutMs = policy.heartbeat_timeout_seconds === null ? null : policy.heartbeat_timeout_seconds * 1000;
        const silence = {
          none: 0,
          released: 0,
          'other machine': 0,
          fresh: 60_000,
          'before timeout': (timeoutMs ?? 2 * MARGIN_MS) - MARGIN_MS,
          'after timeout': (timeoutMs ?? 0) + MARGIN_MS,
          'long silent': 30 * DAY_MS,
        }[c.seat];
        const lastSeenAt = now.getTime() - silence;
        const live =
          !['none', 'released', 'other machine'].includes(c.seat) &&
          !isSeatDead(new Date(lastSeenAt), policy.heartbeat_timeout_seconds, now);
        const current = usagePeriod(policy, new Date(c.createdAt), now).start.getTime();
        const other = current === monthStart.getTime() ? c.createdAt : monthStart.getTime() - DAY_MS;
        const counterStart = c.counter === 'this period' ? current : other;
        // At the cap's edge: a stored count of this period that the increment brings to the cap ±1, or (no count of this
        // period) an increment of the cap ±1 (a request's increment is at most 10^6).
        let { uses, increment } = c;
        const max = policy.max_uses;
        if (c.edge === 'cap' && max !== null) {
          if (c.counter === 'this period') {
            increment = Math.min(increment, Math.max(1, max - 1));
            uses = Math.max(0, max - increment + c.nudge);
          } else if (max + c.nudge <= 1_000_000) increment = Math.max(1, max + c.nudge);
        }
        return { id: idOf.get(keys[i])!, policy, lastSeenAt, live, counterStart, uses, increment };
      });
      const seated = cases.map((c, i) => ({ c, i })).filter(({ c }) => c.seat !== 'none');
      await client.query(
        `INSERT INTO activations (license_id, product_id, machine_fingerprint, activated_at, last_seen_at, released_at, release_reason)
         SELECT license_id, product_id, fingerprint, last_seen_at, last_seen_at, released_at, CASE WHEN released_at IS NULL THEN NULL ELSE 'deactivated' END
         FROM unnest($1::int[], $2::int[], $3::text[], $4::timestamptz[], $5::timestamptz[]) AS u(license_id, product_id, fingerprint, last_seen_at, released_at)`,
        [
          seated.map(({ i }) => prepared[i].id),
          seated.map(({ c }) => products[c.product].id),
          seated.map(({ c, i }) => (c.seat === 'other machine' ? `${fingerprint(i)}-other` : fingerprint(i))),
          seated.map(({ i }) => new Date(prepared[i].lastSeenAt).toISOString()),
          seated.map(({ c }) => (c.seat === 'released' ? now.toISOString() : null)),
        ],
      );
      const countered = cases.map((c, i) => ({ c, i })).filter(({ c }) => c.counter !== 'none');
      await client.query(
        `INSERT INTO usage_counters (license_id, period_start, uses) SELECT * FROM unnest($1::int[], $2::timestamptz[], $3::bigint[])`,
        [
          countered.map(({ i }) => prepared[i].id),
          countered.map(({ i }) => new Date(prepared[i].counterStart).toISOString()),
          countered.map(({ i }) => prepared[i].uses),
        ],
      );
      const counters = async () =>
        new Map(
          (
            await client.query<{ license_id: number; period_start: Date; uses: string }>(
              `SELECT license_id, period_start, uses FROM usage_counters WHERE license_id = ANY($1::int[])`,
              [prepared.map((p) => p.id)],
            )
          ).rows.map((r) => [`${r.license_id}@${r.period_start.toISOString()}`, Number(r.uses)]),
        );
      const expectedCounters = await counters();

      const outcomes = new Set<string>();
      const disagreements: unknown[] = [];
      for (const [i, c] of cases.entries()) {
        const p = prepared[i];
        const license = {
          ...c,
          expiresAt: c.expiresAt === null ? null : new Date(c.expiresAt),
          createdAt: new Date(c.createdAt),
          policy: p.policy,
        };
        const decision = decideUsage(c.unknownKey ? null : license, p.live ? {} : null, now);
        let expected: CountedBelowCap | null = null;
        if (decision.kind === 'count') {
          const stored = c.counter === 'none' ? null : { periodStart: new Date(p.counterStart), uses: p.uses };
          const before = usesIn(decision.period, stored);
          const after = before + p.increment;
          const edge = after < decision.maxUses ? 'below the cap' : after === decision.maxUses ? 'reaches the cap' : 'past the cap';
          outcomes.add(`${edge}, ${before === 0 ? 'no count yet' : 'counted before'}`);
          if (after < decision.maxUses) {
            expected = {
              uses: after,
              maxUses: decision.maxUses,
              usesPeriod: p.policy.uses_period,
              createdAt: license.createdAt,
            };
            expectedCounters.set(`${p.id}@${decision.period.start.toISOString()}`, after);
          }
        } else outcomes.add(decision.kind === 'deny' ? `deny ${decision.error.code}` : 'unmetered');
        const key = c.unknownKey ? `${keys[i]}-unknown` : keys[i];
        const counted = await usage.countBelowCap(key, fingerprint(i), p.increment, monthStart, now);
        if (JSON.stringify(counted) !== JSON.stringify(expected)) {
          disagreements.push({ case: c, uses: p.uses, increment: p.increment, decision: decision.kind, expected, counted });
        }
      }
      expect(disagreements.slice(0, 5)).toEqual([]);
      // Only what the TypeScript rule counted was written, into the period it names.
      expect(Object.fromEntries(await counters())).toEqual(Object.fromEntries(expectedCounters));
      // The sample reached every branch: each denial, not metered, and the cap's edge with and without a count before.
      expect([...outcomes].sort()).toEqual(
        [
          'below the cap, counted before',
          'below the cap, no count yet',
          'past the cap, counted before',
          'past the cap, no count yet',
          'reaches the cap, counted before',
          'reaches the cap, no count yet',
          'deny INVALID_KEY',
          'deny KEY_EXPIRED',
          'deny KEY_REVOKED',
          'deny KEY_SUSPENDED',
          'deny NOT_ACTIVATED',
          'unmetered',
        ].sort(),
      );
    }, 60_000);
  });

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
          statusCaseColumns(cases),
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
