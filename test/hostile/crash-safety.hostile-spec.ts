import { isProcessRunning } from '../../src/database/processes';
import { verifySignature } from '../../src/signing/license-signature';
import { fingerprint } from '../support/factories';
import { clusterProcesses, EmbeddedServer, embeddedServer, waitForReaped, withDatabase } from './support/embedded-server';
import { jsonRequest, send } from './support/raw-http';
import { report, tally } from './support/report';

const LICENCES_PER_ROUND = 100;
const MACHINES_PER_LICENCE = 2; // two machines race for each single-seat licence: one wins, one is refused
const WORKERS = 16;
/** Kill once this share of the round's answers is in: the middle of the load. */
const KILL_AFTER_SHARE = 0.4;

type Seen = 'ok' | 'refused' | 'connection-refused' | 'indeterminate';

interface Attempt {
  round: number;
  licenseId: number;
  key: string;
  fp: string;
  seen: Seen;
  detail: string;
}

/** The client's view of one activation: success, a refusal, never connected, or cut off with no answer. */
function classify(status: number | undefined, code: string | undefined, error: string | undefined): Seen {
  if (status === 200) return 'ok';
  if (status !== undefined) return 'refused';
  return error?.includes('ECONNREFUSED') ? 'connection-refused' : 'indeterminate';
}

describe('crash safety: kill -9 in the middle of an activation load', () => {
  let s: EmbeddedServer;
  let publicKeyPem: string;

  beforeAll(async () => {
    s = await embeddedServer();
    publicKeyPem = ((await send(s.server.port, jsonRequest('GET', '/api/v1/public-key'))).json as { public_key_pem: string })
      .public_key_pem;
  }, 90_000);

  afterAll(() => s?.cleanup());

  async function createLicences(n: number): Promise<{ id: number; key: string }[]> {
    const out: { id: number; key: string }[] = [];
    for (let i = 0; i < n; i++) {
      const res = await send(
        s.server.port,
        jsonRequest('POST', '/api/v1/admin/licenses', { product_code: 'POS_RETAIL', license_type: 'YEARLY', customer_name: `Crash ${i}` }, [
          ['X-API-Key', s.apiKey],
        ]),
      );
      if (res.status !== 201) throw new Error(`licence creation: ${res.status} ${res.body}`);
      const { id, license_key } = res.json as { id: number; license_key: string };
      out.push({ id, key: license_key });
    }
    return out;
  }

  /** Activates every (licence, machine) once with WORKERS in parallel and runs `kill` when the share of answers is reached. */
  async function loadAndKill(round: number, kill: () => Promise<void>): Promise<Attempt[]> {
    const licences = await createLicences(LICENCES_PER_ROUND);
    const queue = licences.flatMap((l) =>
      Array.from({ length: MACHINES_PER_LICENCE }, (_, m) => ({ ...l, fp: fingerprint(`crash-${round}-${l.id}-${m}`) })),
    );
    const attempts: Attempt[] = [];
    const port = s.server.port;
    let killed: Promise<void> | undefined;
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const { id, key, fp } = next;
        // Tagged, not `instanceof Error`: socket errors come from another realm inside a Jest worker.
        const { res, err } = await send(
          port,
          jsonRequest('POST', '/api/v1/activate', { license_key: key, machine_fingerprint: fp, hostname: `crash-${round}` }),
        ).then(
          (r) => ({ res: r, err: undefined }),
          (e: NodeJS.ErrnoException) => ({ res: undefined, err: `${e.code ?? ''} ${e.message}` }),
        );
        const seen = classify(res?.status, (res?.json as { error?: { code?: string } })?.error?.code, err);
        if (seen === 'ok') {
          const signed = res?.json as { license: { machine_fingerprint: string }; signature: string };
          if (signed.license.machine_fingerprint !== fp || !verifySignature(signed.license, signed.signature, publicKeyPem))
            throw new Error(`bad signed licence for ${fp}`);
        }
        attempts.push({ round, licenseId: id, key, fp, seen, detail: res ? `${res.status} ${res.body.slice(0, 80)}` : String(err) });
        if (!killed && attempts.length >= LICENCES_PER_ROUND * MACHINES_PER_LICENCE * KILL_AFTER_SHARE) killed = kill();
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, worker));
    await killed;
    return attempts;
  }

  /** Compares what every client saw with what the database holds: all-or-nothing for cut-off requests, exact for the rest. */
  async function violationsIn(attempts: Attempt[]): Promise<{ violations: string[]; indeterminateCommitted: number }> {
    const violations: string[] = [];
    let indeterminateCommitted = 0;
    await withDatabase(s.databaseUrl(), async (c) => {
      for (const a of attempts) {
        const { rows } = await c.query(
          `SELECT (SELECT count(*)::int FROM activations WHERE license_id = $1 AND machine_fingerprint = $2) AS seats,
                  (SELECT count(*)::int FROM activations WHERE license_id = $1 AND machine_fingerprint = $2 AND released_at IS NULL) AS current,
                  (SELECT count(*)::int FROM audit_entries WHERE license_id = $1 AND action = 'license.activated' AND details->>'machine_fingerprint' = $2) AS activated,
                  (SELECT count(*)::int FROM audit_entries WHERE license_id = $1 AND action = 'license.activation_denied' AND details->>'machine_fingerprint' = $2) AS denied`,
          [a.licenseId, a.fp],
        );
        const r = rows[0] as { seats: number; current: number; activated: number; denied: number };
        const state = JSON.stringify(r);
        const nothing = r.seats === 0 && r.activated === 0 && r.denied === 0;
        const activated = r.seats === 1 && r.current === 1 && r.activated === 1 && r.denied === 0;
        const denied = r.seats === 0 && r.activated === 0 && r.denied === 1;
        if (a.seen === 'ok' && !activated) violations.push(`round ${a.round}: client saw 200, database ${state}`);
        if (a.seen === 'refused' && !denied) violations.push(`round ${a.round}: client saw ${a.detail}, database ${state}`);
        if (a.seen === 'connection-refused' && !nothing) violations.push(`round ${a.round}: never connected, database ${state}`);
        if (a.seen === 'indeterminate') {
          if (!(nothing || activated || denied)) violations.push(`round ${a.round}: cut off, database half-done ${state}`);
          if (activated) indeterminateCommitted++;
        }
      }
      // Whatever was cut off, no licence ended up with more seats than it has, and no seat lacks its audit entry.
      const over = await c.query(
        `SELECT l.id, count(a.id)::int AS seats FROM licenses l JOIN activations a ON a.license_id = l.id AND a.released_at IS NULL GROUP BY l.id HAVING count(a.id) > 1`,
      );
      for (const o of over.rows) violations.push(`licence ${o.id} has ${o.seats} current seats, max 1`);
      const unaudited = await c.query(
        `SELECT a.id FROM activations a WHERE (SELECT count(*) FROM audit_entries e WHERE e.action = 'license.activated' AND e.details->>'seat_id' = a.id::text) <> 1`,
      );
      for (const u of unaudited.rows) violations.push(`seat ${u.id} does not have exactly one license.activated entry`);
    });
    return { violations, indeterminateCommitted };
  }

  it('every activation a client saw succeed survives, none it saw fail exists, cut-off ones are all-or-nothing, and the audit trail matches', async () => {
    // Round 1: the server process dies (its PostgreSQL lives on, orphaned; the restart stops and reuses it).
    const round1 = await loadAndKill(1, async () => {
      await s.server.stop('SIGKILL');
    });
    expect(isProcessRunning(s.server.pid)).toBe(false);
    await s.start();
    const check1 = await violationsIn(round1);

    // Round 2: the whole machine dies: server and every PostgreSQL process at once; the restart runs crash recovery.
    const round2 = await loadAndKill(2, async () => {
      const { pid } = s.postmaster();
      const victims = [s.server.pid, ...clusterProcesses(pid)];
      for (const p of victims) {
        try {
          process.kill(p, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      await s.server.exited;
      // As after a reboot: nothing of the old cluster is left, not even an unreaped zombie holding its PID.
      for (const p of victims) await waitForReaped(p);
    });
    await s.start();
    const check2 = await violationsIn([...round1, ...round2]);

    // The restarted server serves the licences its clients saw activated.
    const ok = [...round1, ...round2].filter((a) => a.seen === 'ok');
    const validations = await Promise.all(
      ok
        .slice(0, 40)
        .map((a) =>
          send(s.server.port, jsonRequest('POST', '/api/v1/validate', { license_key: a.key, machine_fingerprint: a.fp })).then(
            (r) => (r.json as { valid: boolean }).valid,
          ),
        ),
    );

    const violations = [...check1.violations, ...check2.violations];
    report('crash-safety', {
      activations_sent: round1.length + round2.length,
      client_view_round_1_server_killed: tally(round1, (a) => a.seen),
      client_view_round_2_server_and_database_killed: tally(round2, (a) => a.seen),
      cut_off_requests_found_committed: check2.indeterminateCommitted,
      successes_checked: ok.length,
      validated_after_restart: validations.filter(Boolean).length,
      invariant_violations: violations.length,
    });
    expect(violations).toEqual([]);
    expect(validations.every(Boolean)).toBe(true);
    // The kill really landed in the middle: some answers before it, and requests that never got one.
    for (const round of [round1, round2]) {
      expect(round.filter((a) => a.seen === 'ok').length).toBeGreaterThan(0);
      expect(round.filter((a) => a.seen === 'connection-refused' || a.seen === 'indeterminate').length).toBeGreaterThan(0);
    }
  }, 180_000);
});
