import { createLicense, fingerprint } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

/** Seat counting under a race: the licence row lock serialises activations of one licence. */
describe('concurrent activations', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen(0); // one listening server for all parallel requests
  }, 60_000);
  afterAll(() => t.close());

  const activateFrom = (licenseKey: string, machine: string) =>
    t
      .http()
      .post('/api/v1/activate')
      .send({ license_key: licenseKey, machine_fingerprint: fingerprint(machine), hostname: machine });

  async function race(licenseKey: string, machines: string[]) {
    const results = await Promise.all(machines.map((m) => activateFrom(licenseKey, m)));
    const statuses = results.map((r) => r.status);
    const codes = results.filter((r) => r.status !== 200).map((r) => r.body.error?.code);
    return { results, ok: statuses.filter((s) => s === 200).length, codes };
  }

  it.each([1, 3])(
    '50 machines at once on a licence with %i seat(s): exactly that many win, the rest ALREADY_ACTIVATED, no 500',
    async (seats) => {
      const lic = await createLicense(t, { limits: { max_installations: seats } });
      const machines = Array.from({ length: 50 }, (_, i) => `race-${seats}-${i}`);
      const { results, ok, codes } = await race(lic.license_key, machines);
      expect(ok).toBe(seats);
      expect(codes).toEqual(Array(50 - seats).fill('ALREADY_ACTIVATED'));
      const current = await t.sql('SELECT machine_fingerprint FROM activations WHERE license_id = $1 AND released_at IS NULL', [lic.id]);
      expect(current).toHaveLength(seats);
      const winners = results
        .filter((r) => r.status === 200)
        .map((r) => r.body.license.machine_fingerprint)
        .sort();
      expect(current.map((c) => c.machine_fingerprint).sort()).toEqual(winners);
      const audit = await t.sql(
        `SELECT action, count(*)::int AS n FROM audit_entries WHERE license_id = $1 AND action LIKE 'license.activat%' GROUP BY action ORDER BY action`,
        [lic.id],
      );
      expect(audit).toEqual([
        { action: 'license.activated', n: seats },
        { action: 'license.activation_denied', n: 50 - seats },
      ]);
    },
  );

  it('the same machine activating 20 times at once holds one seat and every call succeeds with the same activated_at', async () => {
    const lic = await createLicense(t);
    const { results, ok } = await race(lic.license_key, Array(20).fill('same-machine'));
    expect(ok).toBe(20);
    expect(new Set(results.map((r) => r.body.license.activated_at)).size).toBe(1);
    const current = await t.sql('SELECT id FROM activations WHERE license_id = $1 AND released_at IS NULL', [lic.id]);
    expect(current).toHaveLength(1);
  });

  it('activations and deactivations interleaved never exceed the seats', async () => {
    const lic = await createLicense(t, { limits: { max_installations: 2 } });
    const machines = Array.from({ length: 10 }, (_, i) => `churn-${i}`);
    await Promise.all(
      machines.flatMap((m) => [
        activateFrom(lic.license_key, m),
        t
          .http()
          .post('/api/v1/deactivate')
          .send({ license_key: lic.license_key, machine_fingerprint: fingerprint(m) }),
        activateFrom(lic.license_key, m),
      ]),
    ).then((results) => expect(results.map((r) => r.status).filter((s) => s >= 500)).toEqual([]));
    const [{ n }] = await t.sql('SELECT count(*)::int AS n FROM activations WHERE license_id = $1 AND released_at IS NULL', [lic.id]);
    expect(n).toBeLessThanOrEqual(2);
  });
});
