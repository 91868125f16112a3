import type { OpenAPIObject } from '@nestjs/swagger';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import request, { type Response } from 'supertest';
import { fingerprint } from './support/factories';
import { runClientFlow } from './support/openapi-client-flow';
import { conformant, OpenApiConformance } from './support/openapi-conformance';
import { createTestApp, TEST_API_KEY, TestApp } from './support/test-app';

const run = promisify(execFile);
const bin = (name: string) => join(__dirname, '..', 'node_modules', '.bin', name);
const GENERATED_TYPES = join(__dirname, 'generated', 'openapi.d.ts');
const LICENSES = '/api/v1/admin/licenses';

/** A response as supertest hands it to the checker. */
const fakeResponse = (method: string, path: string, status: number, body: unknown, headers: Record<string, string> = {}) =>
  ({
    req: { method, path },
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body,
    text: JSON.stringify(body),
  }) as unknown as Response;

describe('OpenAPI document', () => {
  let t: TestApp;
  let dir: string;

  beforeAll(async () => {
    t = await createTestApp();
    dir = mkdtempSync(join(tmpdir(), 'openapi-'));
  }, 60_000);
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('names only tags it defines, each with a description', () => {
    const defined = new Map((t.openApi.tags ?? []).map((tag) => [tag.name, tag.description]));
    const used = Object.values(t.openApi.paths)
      .flatMap((ops) => Object.values(ops as Record<string, { tags?: string[] }>))
      .flatMap((op) => op.tags ?? []);
    expect([...new Set(used)].filter((name) => !defined.get(name))).toEqual([]);
  });

  describe('conformance check of every response (test/support/openapi-conformance.ts)', () => {
    let conformance: OpenApiConformance;
    beforeAll(() => (conformance = new OpenApiConformance(t.openApi)));

    it('accepts a documented status with a body that matches its schema', () => {
      const body = {
        valid: true,
        status: 'active',
        expires_at: null,
        revoked: false,
        grace_ends_at: null,
        code: null,
        uses: null,
        max_uses: null,
      };
      expect(conformance.check(fakeResponse('POST', '/api/v1/validate', 200, body))).toBeUndefined();
    });

    it('rejects a status the operation does not document', () => {
      expect(conformance.check(fakeResponse('POST', '/api/v1/validate', 409, { error: { code: 'CONFLICT', message: 'x' } }))).toMatch(
        /POST \/api\/v1\/validate → 409 is not documented/,
      );
    });

    it.each([
      ['a wrong type', { id: '1', license_key: 'K', message: 'm' }, /must be integer/],
      ['a missing field', { id: 1, message: 'm' }, /must have required property 'license_key'/],
      ['null where not nullable', { id: 1, license_key: null, message: 'm' }, /must be string/],
    ])('rejects a body with %s', (_label, body, problem) => {
      expect(conformance.check(fakeResponse('POST', LICENSES, 201, body))).toMatch(problem);
    });

    it('checks formats, path parameters, media types and required headers', () => {
      const activation = {
        id: 1,
        machine_fingerprint: fingerprint(1),
        hostname: null,
        os: null,
        app_version: null,
        ip: null,
        activated_at: 'yesterday',
        last_seen_at: '2026-01-01T00:00:00.000Z',
        released_at: null,
        release_reason: null,
        active: true,
      };
      expect(conformance.check(fakeResponse('GET', `${LICENSES}/7/activations`, 200, [activation]))).toMatch(
        /must match format "date-time"/,
      );
      expect(conformance.check(fakeResponse('GET', `${LICENSES}/7/activations`, 200, [], { 'content-type': 'text/html' }))).toMatch(
        /answered text\/html/,
      );
      expect(conformance.check(fakeResponse('GET', LICENSES, 200, []))).toMatch(/lacks the required header X-Total-Count/);
      expect(conformance.check(fakeResponse('GET', LICENSES, 200, [], { 'x-total-count': '0' }))).toBeUndefined();
    });

    it('leaves routes the document does not describe alone', () => {
      expect(conformance.check(fakeResponse('GET', '/dashboard', 500, 'x'))).toBeUndefined();
      expect(conformance.check(fakeResponse('GET', '/api/v1/nope', 404, {}))).toBeUndefined();
    });

    it("fails the request's promise through the shared helper when the server answers off the document", async () => {
      const skewed = JSON.parse(JSON.stringify(t.openApi)) as OpenAPIObject;
      skewed.paths['/api/v1/health/live'].get!.responses['200'] = {
        description: 'skewed',
        content: { 'application/json': { schema: { type: 'object', required: ['uptime'] } } },
      };
      const http = conformant(request(t.app.getHttpServer()), new OpenApiConformance(skewed));
      await expect(http.get('/api/v1/health/live').expect(200)).rejects.toThrow(/must have required property 'uptime'/);
      // The test's own expectation is reported first.
      await expect(http.get('/api/v1/health/live').expect(201)).rejects.toThrow(/expected 201/);
      await t.http().get('/api/v1/health/live').expect(200);
    });
  });

  describe('a client generated with openapi-typescript and openapi-fetch (default settings)', () => {
    it('test/generated/openapi.d.ts is generated from the live document (`npm run openapi:types`)', async () => {
      const documentFile = join(dir, 'openapi.json');
      writeFileSync(documentFile, JSON.stringify(t.openApi));
      await run(bin('openapi-typescript'), [documentFile, '-o', join(dir, 'openapi.d.ts')]);
      expect(readFileSync(join(dir, 'openapi.d.ts'), 'utf8')).toBe(readFileSync(GENERATED_TYPES, 'utf8'));
    }, 60_000);

    it('compiles the admin and client flow against the generated types (tsc --strict)', async () => {
      const flow = join(__dirname, 'support', 'openapi-client-flow.ts');
      const args = [
        '--ignoreConfig',
        '--noEmit',
        '--strict',
        '--skipLibCheck',
        '--module',
        'node20',
        '--target',
        'es2022',
        '--types',
        'node',
        flow,
      ];
      const errors = await run(bin('tsc'), args).then(
        () => '',
        (err: { stdout?: string; message: string }) => err.stdout || err.message,
      );
      expect(errors).toBe('');
    }, 120_000);

    it('runs the whole flow: product, licence, list, get, partial update, activate, validate, deactivate, revoke, release, audit, stats', async () => {
      await new Promise<void>((resolve) => t.app.getHttpServer().listen(0, '127.0.0.1', resolve));
      const { port } = t.app.getHttpServer().address() as AddressInfo;
      const r = await runClientFlow(`http://127.0.0.1:${port}`, TEST_API_KEY, fingerprint('typed-client'));

      expect(r.listed.map((l) => l.id)).toEqual([r.created.id]);
      expect(r.totalCount).toBe('1');
      // The PUT sent only notes: grace_days and active kept their stored values.
      expect(r.updated).toMatchObject({ notes: 'Sent by the typed client', grace_days: 7, active: true });
      expect(r.activated.license).toMatchObject({ license_key: r.created.license_key, product: r.product.code });
      expect(r.validated).toMatchObject({ valid: true, code: null, status: 'active' });
      expect(r.unknownKeyCode).toBe('INVALID_KEY');
      expect(r.deactivated.can_reactivate).toBe(true);
      expect(r.revoked).toMatchObject({ revoked: true, status: 'revoked', revoke_reason: 'Typed test' });
      expect(r.released.released).toBe(1);
      expect(r.activations.map((a) => a.release_reason)).toEqual(['force_released', 'deactivated']);
      expect(r.audit.map((e) => e.action)).toEqual(
        expect.arrayContaining(['license.created', 'license.updated', 'license.activated', 'license.revoked', 'license.released']),
      );
      expect(r.stats.find((s) => s.product_code === r.product.code)?.licenses).toMatchObject({ total: 1, revoked: 1 });
    }, 30_000);
  });
});
