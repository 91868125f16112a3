import { LICENSE_STATUSES } from '../../src/licenses/license-status';
import { LicensesService } from '../../src/licenses/licenses.service';
import { ChangeLicense } from '../../src/licenses/use-cases/change-license';
import { RevokeLicense } from '../../src/licenses/use-cases/revoke-license';
import { UpdateLicenseDto } from '../../src/licenses/dto/create-license.dto';
import { SeatsService } from '../../src/licenses/seats/seats.service';
import type { ProductStatsDto } from '../../src/stats/dto/product-stats.dto';
import { StatsService } from '../../src/stats/stats.service';
import {
  ADMIN_ACTOR,
  CLIENT_ACTOR,
  createServiceHarness,
  issueLicense,
  machine,
  productId,
  ServiceHarness,
} from '../support/service-harness';

/**
 * Statistics through StatsService on real PostgreSQL: counters kept by the database's triggers in the writing
 * transactions, exact at the moment of the read (docs/licences.md, Statistics). Each test reads the change it makes
 * (after minus before), so the licences of other tests do not matter.
 */
describe('StatsService (integration)', () => {
  let h: ServiceHarness;
  let stats: StatsService;
  let licenses: LicensesService;
  let changing: ChangeLicense;
  let revoking: RevokeLicense;
  let seats: SeatsService;

  beforeAll(async () => {
    h = await createServiceHarness();
    stats = h.get(StatsService);
    licenses = h.get(LicensesService);
    changing = h.get(ChangeLicense);
    revoking = h.get(RevokeLicense);
    seats = h.get(SeatsService);
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  }, 60_000);

  const read = async (code = 'FISCAL_BRIDGE') => {
    const row = (await stats.productStats()).find((p) => p.product_code === code);
    if (!row) throw new Error(`no statistics for ${code}`);
    return row;
  };
  /** The counters that changed between two reads (after minus before), flattened. */
  const change = (before: ProductStatsDto, after: ProductStatsDto) => {
    const flat = (s: ProductStatsDto) => ({
      ...Object.fromEntries(Object.entries(s.licenses).map(([k, v]) => [`licenses.${k}`, v])),
      ...Object.fromEntries(Object.entries(s.activations).map(([k, v]) => [`activations.${k}`, v])),
      ...Object.fromEntries(Object.entries(s.by_type).map(([k, v]) => [`by_type.${k}`, v])),
    });
    const [b, a] = [flat(before), flat(after)];
    return Object.fromEntries(Object.keys(a).flatMap((k) => (a[k] === b[k] ? [] : [[k, a[k] - b[k]]])));
  };
  /** Runs `work` and returns what it changed in the product's statistics. */
  const changedBy = async (work: () => Promise<unknown>, code = 'FISCAL_BRIDGE') => {
    const before = await read(code);
    await work();
    return change(before, await read(code));
  };
  const bridge = (input: Parameters<typeof issueLicense>[1] = {}) => issueLicense(h, { product_code: 'FISCAL_BRIDGE', ...input });
  const update = (id: number, input: UpdateLicenseDto) => changing.change(id, input, ADMIN_ACTOR);

  it('a licence moves between the status counters as it is issued, suspended, reinstated and revoked; total and by_type follow', async () => {
    let id = 0;
    expect(
      await changedBy(async () => {
        id = (await bridge({ license_type: 'QUARTERLY' })).id;
      }),
    ).toEqual({ 'licenses.total': 1, 'licenses.active': 1, 'by_type.QUARTERLY': 1 });
    expect(await changedBy(() => update(id, { active: false }))).toEqual({ 'licenses.active': -1, 'licenses.suspended': 1 });
    expect(await changedBy(() => update(id, { active: true }))).toEqual({ 'licenses.active': 1, 'licenses.suspended': -1 });
    expect(await changedBy(() => update(id, { license_type: 'YEARLY' }))).toEqual({ 'by_type.QUARTERLY': -1, 'by_type.YEARLY': 1 });
    expect(await changedBy(() => revoking.revoke(id, 'chargeback', ADMIN_ACTOR))).toEqual({
      'licenses.active': -1,
      'licenses.revoked': 1,
    });
  });

  it('the clock alone moves a licence from active to grace: no write between the two reads', async () => {
    const lic = await bridge({ grace_days: 3 });
    await h.sql(`UPDATE licenses SET expires_at = now() + interval '2 seconds' WHERE id = $1`, [lic.id]);
    const before = await read();
    const passed = async () =>
      (await h.sql(`SELECT now() > expires_at AS passed FROM licenses WHERE id = $1`, [lic.id]))[0].passed as boolean;
    // The first read must have seen it before its expiry (2 s of margin on a loaded machine).
    expect(await passed()).toBe(false);
    while (!(await passed())) await new Promise((r) => setTimeout(r, 100));
    expect(change(before, await read())).toEqual({ 'licenses.active': -1, 'licenses.grace': 1 });
  });

  it('a licence past its grace days counts as expired, one inside them as grace', async () => {
    const lic = await bridge({ grace_days: 7 });
    expect(await changedBy(() => h.sql(`UPDATE licenses SET expires_at = now() - interval '2 days' WHERE id = $1`, [lic.id]))).toEqual({
      'licenses.active': -1,
      'licenses.grace': 1,
    });
    expect(await changedBy(() => h.sql(`UPDATE licenses SET expires_at = now() - interval '8 days' WHERE id = $1`, [lic.id]))).toEqual({
      'licenses.grace': -1,
      'licenses.expired': 1,
    });
  });

  it('seats: a binding counts as current and in the last 30 days; a deactivation frees the seat but keeps the binding counted', async () => {
    const lic = await bridge({ limits: { max_installations: 3 } });
    const activate = (seed: string) =>
      seats.activateSeat({ licenseKey: lic.licenseKey, machineFingerprint: machine(seed), hostname: seed }, CLIENT_ACTOR);
    expect(
      await changedBy(async () => {
        await activate('stats-a');
        await activate('stats-b');
      }),
    ).toEqual({ 'activations.current': 2, 'activations.last_30_days': 2 });
    // Re-activation is a refresh, not a binding.
    expect(await changedBy(() => activate('stats-a'))).toEqual({});
    expect(
      await changedBy(() => seats.deactivateSeat({ licenseKey: lic.licenseKey, machineFingerprint: machine('stats-b') }, CLIENT_ACTOR)),
    ).toEqual({ 'activations.current': -1 });
  });

  it('a seat released for a missed heartbeat is counted as such, and leaves current', async () => {
    const lic = await bridge({ policy: { heartbeat_timeout_seconds: 60 } });
    await seats.activateSeat({ licenseKey: lic.licenseKey, machineFingerprint: machine('stats-dead'), hostname: 'dead' }, CLIENT_ACTOR);
    await h.sql(`UPDATE activations SET last_seen_at = now() - interval '2 minutes' WHERE license_id = $1`, [lic.id]);
    expect(await changedBy(() => seats.sweepDeadSeats(1_000))).toEqual({
      'activations.current': -1,
      'activations.released_by_heartbeat_last_30_days': 1,
    });
  });

  it('the counters agree with a recount by the licence list’s status filter, for every product and status', async () => {
    for (const row of await stats.productStats()) {
      for (const status of LICENSE_STATUSES) {
        const listed = await licenses.listLicenses({ product: row.product_code, status, limit: 1 });
        expect({ product: row.product_code, status, n: row.licenses[status] }).toEqual({
          product: row.product_code,
          status,
          n: listed.total,
        });
      }
    }
  });

  it('folding the delta rows changes no number', async () => {
    const before = await stats.productStats();
    const deltaRows = async () => (await h.sql<{ n: number }>(`SELECT count(*)::int AS n FROM stats_deltas`))[0].n;
    const rowsBefore = await deltaRows();
    await stats.fold();
    expect(await deltaRows()).toBeLessThan(rowsBefore);
    expect(await stats.productStats()).toEqual(before);
  });

  it('attacker: a credential limited to one product reads only that product’s statistics', async () => {
    const fb = await productId(h, 'FISCAL_BRIDGE');
    expect((await stats.productStats([fb])).map((p) => p.product_code)).toEqual(['FISCAL_BRIDGE']);
    expect(await stats.productStats([])).toEqual([]);
  });
});
