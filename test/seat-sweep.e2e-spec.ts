import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AppModule } from '../src/app.module';
import { configureApp } from '../src/app.setup';
import { SeatSweepService } from '../src/licenses/seat-sweep.service';
import { createLicense, fingerprint, insertSeat } from './support/factories';
import { createTestApp, TestApp, testConfig } from './support/test-app';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A second instance of the server on the same database (its own pools and job engine), as a load balancer would run it. */
async function secondInstance(t: TestApp): Promise<INestApplication> {
  const config = testConfig(t.config.databaseUrl, { seatSweepIntervalSeconds: t.config.seatSweepIntervalSeconds });
  const moduleRef = await Test.createTestingModule({ imports: [AppModule.forRoot(config)] }).compile();
  const app = moduleRef.createNestApplication({ bodyParser: false, logger: false });
  await configureApp(app, config);
  await app.init();
  return app;
}

/** Dead seats are released by a sweep within 60 s of their death, once, with any number of instances (docs/licences.md, The sweep, on the job engine). */
describe('dead-seat sweep', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ seatSweepIntervalSeconds: 2 });
  }, 60_000);
  afterAll(() => t.close());

  const client = (path: string, key: string, machine: string, extra: Record<string, unknown> = {}) =>
    t
      .http()
      .post(`/api/v1/${path}`)
      .send({ license_key: key, machine_fingerprint: fingerprint(machine), ...extra });

  it('is scheduled on the job engine (every minute, restarting the chain) next to the other schedules', async () => {
    // The engine starts in the background once the app is up; every schedule of the app is on it.
    const expected = [
      { name: 'licenses.expiry-scan', cron: '* * * * *' },
      { name: 'mail-sweep', cron: '* * * * *' },
      { name: 'seats.sweep', cron: '* * * * *' },
      { name: 'stats.fold', cron: '* * * * *' },
      { name: 'webhook-sweep', cron: '* * * * *' },
    ];
    let schedules: { name: string; cron: string }[] = [];
    for (let i = 0; i < 100 && schedules.length < expected.length; i++) {
      schedules = await t.sql<{ name: string; cron: string }>(`SELECT name, cron FROM pgboss.schedule ORDER BY name`);
      if (schedules.length < expected.length) await sleep(100);
    }
    expect(schedules).toEqual(expected);
  });

  it('releases a silent machine within 60 s of its death while a machine heartbeating every 3 s keeps its seat for a minute', async () => {
    const policy = { heartbeat_timeout_seconds: 10 };
    const silent = await createLicense(t, { policy });
    const beating = await createLicense(t, { policy });
    await client('activate', silent.license_key, 'silent', { hostname: 'silent' }).expect(200);
    await client('activate', beating.license_key, 'beating', { hostname: 'beating' }).expect(200);

    const started = Date.now();
    let silentReleasedAt: Date | null = null;
    while (Date.now() - started < 60_000) {
      const beat = await client('heartbeat', beating.license_key, 'beating').expect(200);
      expect(beat.body.valid).toBe(true);
      if (!silentReleasedAt) {
        const [row] = await t.sql(`SELECT released_at, release_reason, last_seen_at FROM activations WHERE license_id = $1`, [silent.id]);
        if (row.released_at) {
          expect(row.release_reason).toBe('heartbeat_timeout');
          // Death is last_seen_at + 10 s; the sweep must follow within 60 s (here: every 2 s).
          expect(row.released_at.getTime() - (row.last_seen_at.getTime() + 10_000)).toBeLessThan(60_000);
          expect(row.released_at.getTime()).toBeGreaterThanOrEqual(row.last_seen_at.getTime() + 10_000);
          silentReleasedAt = row.released_at;
        }
      }
      await sleep(3000);
    }
    expect(silentReleasedAt).not.toBeNull();
    const [beatingSeat] = await t.sql(`SELECT released_at FROM activations WHERE license_id = $1`, [beating.id]);
    expect(beatingSeat.released_at).toBeNull();

    const [audit] = await t.sql(
      `SELECT actor_type, actor, details FROM audit_entries WHERE license_id = $1 AND action = 'license.released'`,
      [silent.id],
    );
    expect(audit).toMatchObject({
      actor_type: 'system',
      details: { machine_fingerprints: [fingerprint('silent')], reason: 'heartbeat_timeout' },
    });
    expect((await client('heartbeat', silent.license_key, 'silent').expect(400)).body.error.code).toBe('NOT_ACTIVATED');
    expect((await client('validate', silent.license_key, 'silent').expect(200)).body).toMatchObject({
      valid: false,
      code: 'NOT_ACTIVATED',
    });
    // The chain's next sweep waits in PostgreSQL, so a restart of every instance loses nothing.
    const [{ n }] = await t.sql(
      `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'seats.sweep' AND state IN ('created', 'retry', 'active')`,
    );
    expect(n).toBeGreaterThanOrEqual(1);
  }, 90_000);

  it('two instances sweeping at once release each dead seat exactly once, with one audit trail', async () => {
    const other = await secondInstance(t);
    try {
      const dead: string[] = [];
      const licences: number[] = [];
      for (let l = 0; l < 20; l++) {
        const lic = await createLicense(t, { limits: { max_installations: 3 }, policy: { heartbeat_timeout_seconds: 10 } });
        licences.push(lic.id);
        for (let s = 0; s < 3; s++) {
          const old = new Date(Date.now() - 120_000);
          dead.push(
            (await insertSeat(t, lic.id, { machine_fingerprint: fingerprint(`two-${l}-${s}`), activated_at: old, last_seen_at: old }))
              .machine_fingerprint,
          );
        }
      }
      const mine = t.app.get(SeatSweepService);
      const theirs = other.get(SeatSweepService);
      // Both instances' job chains may run too: every release is counted from the database, not from return values.
      await Promise.all([mine.sweep(), theirs.sweep(), mine.sweep(), theirs.sweep()]);
      // A sweep skips the seats another transaction holds (SKIP LOCKED): a background sweep of either job chain may
      // still be committing its batch when the four above return. Sweep again until that batch has landed.
      const readRows = () =>
        t.sql<{ machine_fingerprint: string; release_reason: string | null }>(
          `SELECT machine_fingerprint, release_reason FROM activations WHERE license_id = ANY($1)`,
          [licences],
        );
      let rows = await readRows();
      for (let i = 0; i < 50 && !rows.every((r) => r.release_reason !== null); i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        await mine.sweep();
        rows = await readRows();
      }
      expect(rows).toHaveLength(60);
      expect(rows.every((r) => r.release_reason === 'heartbeat_timeout')).toBe(true);
      const audits = await t.sql<{ details: { machine_fingerprints: string[] } }>(
        `SELECT details FROM audit_entries WHERE action = 'license.released' AND license_id = ANY($1)`,
        [licences],
      );
      const released = audits.flatMap((a) => a.details.machine_fingerprints).sort();
      expect(released).toEqual([...dead].sort());
    } finally {
      await other.close();
    }
  });
});
