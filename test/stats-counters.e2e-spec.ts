import { Client } from 'pg';
import { compactSql, productCountersSql, WindowEdge } from '../src/stats/stats.repository';
import { StatsService } from '../src/stats/stats.service';
import { createLicense, fingerprint } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

/**
 * The statistics come from counters kept by triggers (migration StatsCounters). Whatever writes the
 * tables (the API, plain SQL, bulk statements, deletes, truncation) and whenever the counters are
 * folded, they must equal a full scan with the status rule (docs/licences.md, Status and grace) at the same moment.
 */
jest.setTimeout(60_000);

const TYPES = ['TRIAL', 'MONTHLY', 'QUARTERLY', 'YEARLY', 'PERPETUAL'];

// The status rule of deriveLicenseStatus (days of 24 h), over every row: what the counters must reproduce.
const REFERENCE = `
  WITH lic AS (
    SELECT l.product_id, l.license_type, CASE
      WHEN l.revoked THEN 'revoked' WHEN NOT l.active THEN 'suspended'
      WHEN l.expires_at IS NOT NULL AND now() > l.expires_at + make_interval(hours => 24 * l.grace_days) THEN 'expired'
      WHEN l.expires_at IS NOT NULL AND now() > l.expires_at THEN 'grace' ELSE 'active' END AS status
    FROM licenses l
  )
  SELECT p.code AS product_code, p.name AS product_name,
    (SELECT count(*) FROM lic WHERE lic.product_id = p.id)::int AS total,
    (SELECT count(*) FROM lic WHERE lic.product_id = p.id AND status = 'active')::int AS active,
    (SELECT count(*) FROM lic WHERE lic.product_id = p.id AND status = 'grace')::int AS grace,
    (SELECT count(*) FROM lic WHERE lic.product_id = p.id AND status = 'expired')::int AS expired,
    (SELECT count(*) FROM lic WHERE lic.product_id = p.id AND status = 'revoked')::int AS revoked,
    (SELECT count(*) FROM lic WHERE lic.product_id = p.id AND status = 'suspended')::int AS suspended,
    (SELECT coalesce(jsonb_object_agg(t.license_type, t.n), '{}') FROM (SELECT license_type, count(*)::int AS n FROM lic WHERE lic.product_id = p.id GROUP BY 1) t) AS by_type,
    (SELECT count(*) FROM activations a JOIN licenses l ON l.id = a.license_id WHERE l.product_id = p.id AND a.released_at IS NULL)::int AS current,
    (SELECT count(*) FROM activations a JOIN licenses l ON l.id = a.license_id WHERE l.product_id = p.id AND a.activated_at > now() - interval '30 days')::int AS last_30_days,
    (SELECT count(*) FROM activations a JOIN licenses l ON l.id = a.license_id
     WHERE l.product_id = p.id AND a.release_reason = 'heartbeat_timeout' AND a.released_at > now() - interval '30 days')::int AS released_by_heartbeat,
    (SELECT count(*) FROM trials tr WHERE tr.product_id = p.id)::int AS trials_started,
    (SELECT count(*) FROM trials tr WHERE tr.product_id = p.id AND EXISTS (SELECT 1 FROM licenses c WHERE c.converted_from = tr.license_id))::int
      AS trials_converted
  FROM products p ORDER BY p.id`;

/** A small deterministic PRNG, so a failure can be replayed. */
function prng(seed: number) {
  let s = seed >>> 0;
  const next = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  return { next, int: (n: number) => Math.floor(next() * n), pick: <T>(items: T[]) => items[Math.floor(next() * items.length)] };
}

describe('statistics counters', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp()), 60_000);
  afterAll(() => t.close());

  const reference = async () =>
    (await t.sql<Record<string, unknown> & { by_type: Record<string, number> }>(REFERENCE)).map((r) => ({
      product_code: r.product_code,
      product_name: r.product_name,
      licenses: { total: r.total, active: r.active, grace: r.grace, expired: r.expired, revoked: r.revoked, suspended: r.suspended },
      activations: { current: r.current, last_30_days: r.last_30_days, released_by_heartbeat_last_30_days: r.released_by_heartbeat },
      by_type: Object.fromEntries(TYPES.map((type) => [type, r.by_type[type] ?? 0])),
      trials: { started: r.trials_started, converted: r.trials_converted },
    }));
  const expectCountersToMatch = async () => expect((await t.admin.get('/api/v1/admin/stats').expect(200)).body).toEqual(await reference());

  // Instants at least 10 minutes from now (the two reads are milliseconds apart), some of them today and
  // 30 days back, where the counters switch from day buckets to counting rows.
  const HOUR = 3_600_000;
  const instant = (r: ReturnType<typeof prng>) => {
    const near = [-20, -12, -3, 3, 12, 20].map((m) => m * 60_000);
    const base = r.pick([0, 0, -30 * 24 * HOUR, -7 * 24 * HOUR, -365 * 24 * HOUR]);
    const offset = r.next() < 0.5 ? r.pick(near) : (r.int(2 * 400 * 24) - 400 * 24) * HOUR + r.pick(near);
    return new Date(Date.now() + base + offset);
  };

  async function randomChanges(r: ReturnType<typeof prng>, steps: number): Promise<void> {
    const ids = async (table: string, where = 'true') =>
      (await t.sql(`SELECT id FROM ${table} WHERE ${where} ORDER BY id`)).map((row) => row.id);
    for (let i = 0; i < steps; i++) {
      const licences = await ids('licenses');
      const licence = r.pick(licences);
      const seats = await ids('activations');
      switch (r.int(11)) {
        case 0: {
          // A bulk statement of several licences (one trigger call for all of them).
          const n = 1 + r.int(20);
          const rows = Array.from({ length: n }, () => [
            r.int(3) + 1,
            r.pick(TYPES),
            r.next() < 0.15,
            r.next() > 0.15,
            r.next() < 0.2 ? null : instant(r),
            r.int(31),
          ]);
          await t.sql(
            `INSERT INTO licenses (product_id, license_key, license_type, customer_name, revoked, active, expires_at, grace_days)
             SELECT (v->>0)::int, 'CNT-' || md5(random()::text), v->>1, 'Counter test', (v->>2)::boolean, (v->>3)::boolean, (v->>4)::timestamptz, (v->>5)::int
             FROM jsonb_array_elements($1::jsonb) v`,
            [JSON.stringify(rows)],
          );
          break;
        }
        case 1:
          await t.sql('UPDATE licenses SET expires_at = $2 WHERE id = $1', [licence, r.next() < 0.2 ? null : instant(r)]);
          break;
        case 2:
          await t.sql('UPDATE licenses SET grace_days = $2, customer_name = $3 WHERE id = $1', [licence, r.int(31), `renamed ${i}`]);
          break;
        case 3:
          await t.sql('UPDATE licenses SET revoked = NOT revoked, active = $2 WHERE id = $1', [licence, r.next() < 0.7]);
          break;
        case 4:
          await t.sql('UPDATE licenses SET license_type = $2, product_id = $3 WHERE id = $1', [licence, r.pick(TYPES), r.int(3) + 1]);
          break;
        case 5:
          await t.sql('DELETE FROM licenses WHERE id = $1', [licence]); // its seats go with it
          break;
        case 6:
          for (let k = 0, n = 1 + r.int(4); k < n; k++) {
            const activated = instant(r);
            const released = r.next() < 0.3 ? new Date(activated.getTime() + HOUR) : null;
            await t.sql(
              `INSERT INTO activations (license_id, product_id, machine_fingerprint, activated_at, last_seen_at, released_at, release_reason)
               SELECT $1, product_id, $2, $3, $3, $4, $5 FROM licenses WHERE id = $1`,
              [r.pick(licences), fingerprint(), activated, released, released ? 'deactivated' : null],
            );
          }
          break;
        case 7:
          if (seats.length)
            await t.sql(`UPDATE activations SET released_at = now(), release_reason = $2 WHERE id = $1 AND released_at IS NULL`, [
              r.pick(seats),
              r.pick(['force_released', 'heartbeat_timeout']),
            ]);
          break;
        case 8:
          if (seats.length)
            await t.sql('UPDATE activations SET activated_at = $2, last_seen_at = now() WHERE id = $1', [r.pick(seats), instant(r)]);
          break;
        case 9:
          // Moved to another licence, maybe of another product (the foreign key on both columns keeps the product right).
          if (seats.length)
            await t.sql(
              'UPDATE activations SET (license_id, product_id) = (SELECT id, product_id FROM licenses WHERE id = $2) WHERE id = $1',
              [r.pick(seats), r.pick(licences)],
            );
          break;
        case 10:
          if (seats.length) await t.sql('DELETE FROM activations WHERE id = ANY($1)', [[r.pick(seats), r.pick(seats)]]);
          break;
      }
    }
  }

  it('match a full scan after API changes, plain SQL, bulk statements and deletes, folded or not', async () => {
    const r = prng(20261122);
    for (let i = 0; i < 6; i++) {
      const type = r.pick(TYPES);
      const { id } = await createLicense(t, { product_code: r.pick(['POS_RETAIL', 'ERP_SUITE', 'FISCAL_BRIDGE']), license_type: type });
      if (r.next() < 0.5) await t.admin.post(`/api/v1/admin/licenses/${id}/revoke`).send({ reason: 'counters' }).expect(200);
      else
        await t.admin
          .put(`/api/v1/admin/licenses/${id}`)
          .send({ active: r.next() < 0.5, grace_days: r.int(30) })
          .expect(200);
    }
    await expectCountersToMatch();
    const stats = t.app.get(StatsService);
    for (let round = 0; round < 8; round++) {
      await randomChanges(r, 15);
      await expectCountersToMatch();
      if (round % 2 === 1) {
        await stats.fold();
        await expectCountersToMatch();
      }
    }
    // Folding keeps one row per product, metric and hour, and drops what sums to zero.
    await stats.fold();
    const [{ duplicates }] = await t.sql(
      `SELECT count(*)::int - count(DISTINCT (product_id, metric, hour))::int AS duplicates FROM stats_deltas`,
    );
    expect(duplicates).toBe(0);
    expect(await t.sql('SELECT 1 FROM stats_deltas WHERE n = 0')).toEqual([]);
    await expectCountersToMatch();
  });

  it('are read from a few pages of the delta table, not all of them, once folding has left it mostly empty pages', async () => {
    // 60,000 delta rows of every kind the read sums (undated, past hours, the 30-day window) that cancel out:
    // the fold deletes them all, leaving pages that VACUUM empties but cannot give back.
    await t.sql(`
      INSERT INTO stats_deltas (product_id, metric, hour, n)
      SELECT p.id, m.metric, date_trunc('hour', now() AT TIME ZONE 'UTC') - m.ago, s
      FROM products p, generate_series(1, 5000), (VALUES (1), (-1)) AS sign(s),
           (VALUES ('usable', NULL::interval), ('expires', interval '400 days'), ('activated_ends', interval '3 days')) AS m(metric, ago)`);
    // What the fold keeps, written after the dead rows: as on a real server, a row per product and future
    // expiry hour (here 3,000 licences expiring over the next two years).
    await t.sql(`
      INSERT INTO licenses (product_id, license_key, license_type, customer_name, expires_at, grace_days)
      SELECT 1 + n % 3, 'CNT-FUTURE-' || n, 'YEARLY', 'Counter test', now() + n * interval '6 hours', 7
      FROM generate_series(1, 3000) n`);
    await t.app.get(StatsService).fold();
    await t.sql('VACUUM ANALYZE stats_deltas');
    const [{ pages }] = await t.sql<{ pages: number }>(`SELECT relpages AS pages FROM pg_class WHERE relname = 'stats_deltas'`);
    expect(pages).toBeGreaterThan(100);

    // The pages the read touches in stats_deltas and its indexes (a scan node's buffers include its children's).
    type PlanNode = { 'Relation Name'?: string; 'Shared Hit Blocks': number; 'Shared Read Blocks': number; Plans?: PlanNode[] };
    const [{ 'QUERY PLAN': plan }] = await t.sql<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
      `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${productCountersSql()}`,
    );
    let touched = 0;
    let scans = 0;
    const walk = (node: PlanNode) => {
      if (node['Relation Name'] === 'stats_deltas') {
        scans++;
        touched += node['Shared Hit Blocks'] + node['Shared Read Blocks'];
      }
      (node.Plans ?? []).forEach(walk);
    };
    walk(plan[0].Plan);
    expect(scans).toBeGreaterThan(0);
    expect(touched).toBeLessThan(pages / 10);
    await expectCountersToMatch();
  });

  it('count the seats of the 30-day window exactly with either way of counting its older edge', async () => {
    // Seats every hour from a day before the window's start to a day after it (10 minutes off the hour,
    // so none is within a read's duration of the boundary), on all three products.
    const licences = await Promise.all(
      ['POS_RETAIL', 'ERP_SUITE', 'FISCAL_BRIDGE'].map((product_code) => createLicense(t, { product_code })),
    );
    for (let hours = -26; hours <= 26; hours++) {
      const activated = new Date(Date.now() - 30 * 24 * HOUR + hours * HOUR - 10 * 60_000);
      await t.sql(
        `INSERT INTO activations (license_id, product_id, machine_fingerprint, activated_at, last_seen_at) SELECT $1, product_id, $2, $3, $3 FROM licenses WHERE id = $1`,
        [licences[(hours + 26) % 3].id, fingerprint(), activated],
      );
    }
    const expectEdgesToMatch = async () => {
      const expected = (await reference()).map((p) => ({ product_code: p.product_code, activated: p.activations.last_30_days }));
      for (const edge of ['add', 'subtract', 'auto'] as WindowEdge[]) {
        const rows = await t.sql<{ product_code: string; counts: Record<string, number> }>(productCountersSql(edge));
        const count = (p: (typeof rows)[number], metric: string) => Number(p.counts[metric] ?? 0);
        expect({
          edge,
          rows: rows.map((p) => ({ product_code: p.product_code, activated: count(p, 'activated') - count(p, 'activated_ends') })),
        }).toEqual({
          edge,
          rows: expected,
        });
      }
    };
    await expectEdgesToMatch();
    await t.app.get(StatsService).fold();
    await expectEdgesToMatch();
    await expectCountersToMatch();
  });

  it('follow activations and releases through the client API', async () => {
    const { license_key, id } = await createLicense(t, { product_code: 'ERP_SUITE', limits: { max_installations: 3 } });
    const machine = fingerprint('counters-client');
    await t.http().post('/api/v1/activate').send({ license_key, machine_fingerprint: machine, hostname: 'till' }).expect(200);
    await t.http().post('/api/v1/activate').send({ license_key, machine_fingerprint: machine, hostname: 'till' }).expect(200); // re-activation: no change
    await t
      .http()
      .post('/api/v1/activate')
      .send({ license_key, machine_fingerprint: fingerprint('counters-2'), hostname: 'till-2' })
      .expect(200);
    await expectCountersToMatch();
    await t.http().post('/api/v1/deactivate').send({ license_key, machine_fingerprint: machine }).expect(200);
    await t.admin.post(`/api/v1/admin/licenses/${id}/release`).send({}).expect(200);
    await expectCountersToMatch();
  });

  it('start from zero after TRUNCATE', async () => {
    await t.sql('TRUNCATE licenses CASCADE');
    await expectCountersToMatch();
    const body = (await t.admin.get('/api/v1/admin/stats').expect(200)).body;
    expect(
      body.every(
        (s: { licenses: { total: number }; activations: { current: number } }) => s.licenses.total === 0 && s.activations.current === 0,
      ),
    ).toBe(true);
  });
});

describe('statistics counters at the edges of an hour', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp()), 60_000);
  afterAll(() => t.close());
  const HOUR = 3_600_000;

  it('are exact at every moment of an hour, events at its edges included (a clock the test sets)', async () => {
    // now() resolves to test_clock.now() on this connection (the schema comes before pg_catalog in its search
    // path), so the reference and the counters are read at chosen instants: on the hour, a microsecond either
    // side, at the half hour where the server switches from adding to subtracting, and on events themselves.
    const client = new Client({ connectionString: t.config.databaseUrl });
    await client.connect();
    try {
      await client.query(`CREATE SCHEMA test_clock`);
      await client.query(
        `CREATE FUNCTION test_clock.now() RETURNS timestamptz LANGUAGE sql STABLE AS $$ SELECT current_setting('test_clock.now')::timestamptz $$`,
      );
      await client.query(`SET search_path = test_clock, pg_catalog, public`);
      // An hour ahead of the real clock: a fold at the real clock (the app's minute check) merges only hours that
      // are past at the test's clock too. (A fold at the test's clock would mislead a read at the real one: this
      // app reads only at the test's clock.)
      const hour = new Date(Math.floor(Date.now() / HOUR) * HOUR + 2 * HOUR);
      const at = (ms: number) => new Date(hour.getTime() + ms).toISOString();
      const HALF = HOUR / 2;
      const edges = [-HOUR, -1, 0, 1, HALF - 1, HALF, HALF + 1, HOUR - 1, HOUR, HOUR + 1];
      const microsecond = ['-00:00:00.000001', '00:00:00', '00:00:00.000001'];
      // Licences expiring on each edge (grace 0: the grace ends there too), others whose grace (1 day) ends there;
      // seats activated and heartbeat releases made exactly 30 days (720 hours) before each edge.
      const { rows: licences } = await client.query<{ id: number }>(
        `INSERT INTO licenses (product_id, license_key, license_type, customer_name, expires_at, grace_days)
         SELECT 1 + (e.n + g.d) % 3, 'CNT-EDGE-' || e.n || '-' || m.k || '-' || g.d, 'MONTHLY', 'Edge test',
                e.at::timestamptz + m.shift::interval - make_interval(days => g.d), g.d
         FROM unnest($1::text[]) WITH ORDINALITY e(at, n), unnest($2::text[]) WITH ORDINALITY m(shift, k), (VALUES (0), (1)) g(d)
         RETURNING id`,
        [edges.map(at), microsecond],
      );
      await client.query(
        `INSERT INTO activations (license_id, product_id, machine_fingerprint, activated_at, last_seen_at, released_at, release_reason)
         SELECT l.id, l.product_id, 'sha256:' || md5(e.at || m.shift || r.released), a.at, a.at,
                CASE WHEN r.released THEN a.at + interval '1 hour' END, CASE WHEN r.released THEN 'heartbeat_timeout' END
         FROM unnest($1::text[]) WITH ORDINALITY e(at, n), unnest($2::text[]) m(shift), (VALUES (false), (true)) r(released),
              LATERAL (SELECT e.at::timestamptz + m.shift::interval - interval '720 hours' - CASE WHEN r.released THEN interval '1 hour' ELSE interval '0 hours' END AS at) a,
              LATERAL (SELECT id, product_id FROM licenses WHERE id = ($3::int[])[1 + e.n % cardinality($3::int[])]) l`,
        [edges.map(at), microsecond, licences.map((l) => l.id)],
      );

      const clocks = edges.filter((ms) => ms >= 0 && ms <= HOUR).flatMap((ms) => microsecond.map((shift) => [at(ms), shift]));
      for (const [instant, shift] of clocks) {
        await client.query(`SELECT set_config('test_clock.now', ($1::timestamptz + $2::interval)::text, false)`, [instant, shift]);
        const { rows: clock } = await client.query(`SELECT now() = $1::timestamptz + $2::interval AS set`, [instant, shift]);
        expect(clock).toEqual([{ set: true }]);
        const { rows: ref } = await client.query(REFERENCE);
        const expected = ref.map((r) => ({
          product_code: r.product_code,
          active: r.active,
          grace: r.grace,
          expired: r.expired,
          last_30_days: r.last_30_days,
          released_by_heartbeat: r.released_by_heartbeat,
        }));
        const read = async (edge: WindowEdge) =>
          (await client.query<{ product_code: string; counts: Record<string, number> }>(productCountersSql(edge))).rows.map((p) => {
            const count = (metric: string) => Number(p.counts[metric] ?? 0);
            return {
              product_code: p.product_code,
              active: count('usable') - count('expires'),
              grace: count('expires') - count('grace_ends'),
              expired: count('grace_ends'),
              last_30_days: count('activated') - count('activated_ends'),
              released_by_heartbeat: count('heartbeat_released') - count('heartbeat_released_ends'),
            };
          });
        for (const edge of ['add', 'subtract', 'auto'] as WindowEdge[]) {
          expect({ clock: `${instant} + ${shift}`, edge, rows: await read(edge) }).toEqual({
            clock: `${instant} + ${shift}`,
            edge,
            rows: expected,
          });
        }
        await client.query(compactSql()); // folded at that moment, as the minute check would
        expect({ clock: `${instant} + ${shift}`, folded: await read('auto') }).toEqual({
          clock: `${instant} + ${shift}`,
          folded: expected,
        });
      }
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS test_clock CASCADE`).catch(() => undefined);
      await client.end();
    }
  });
});
