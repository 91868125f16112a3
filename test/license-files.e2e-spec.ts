import canonicalize from 'canonicalize';
import { spawnSync } from 'node:child_process';
import { createPublicKey, verify } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readDocument, verifyLicenseDocument } from '../src/cli/verify-license';
import { activationRequest, createLicense, fingerprint, setLicenseExpiry } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const DAY = 86_400_000;

interface LicenseFileDocument {
  license: Record<string, unknown> & { file_issued_at: string; file_expires_at: string; machine_fingerprint: string; key_id: string };
  signature: string;
}

/** Decodes the licence file's armor (docs/client-api.md, Licence file) as a client would, checking its shape on the way. */
function decodeLicenseFile(text: string): LicenseFileDocument {
  const lines = text.trimEnd().split('\n');
  expect(lines[0]).toBe('-----BEGIN LICENSE FILE-----');
  expect(lines[lines.length - 1]).toBe('-----END LICENSE FILE-----');
  const body = lines.slice(1, -1);
  body.slice(0, -1).forEach((line) => expect(line).toHaveLength(64));
  expect(body[body.length - 1].length).toBeLessThanOrEqual(64);
  return JSON.parse(Buffer.from(body.join(''), 'base64').toString('utf8')) as LicenseFileDocument;
}

describe('licence files and air-gapped activation (docs/licences.md, Offline use and air-gapped machines)', () => {
  let t: TestApp;
  let publicKeyPem: string;
  let dir: string;

  beforeAll(async () => {
    t = await createTestApp();
    publicKeyPem = (await t.http().get('/api/v1/public-key').expect(200)).body.public_key_pem;
    dir = mkdtempSync(join(tmpdir(), 'licfile-'));
    writeFileSync(join(dir, 'public.pem'), publicKeyPem);
  }, 60_000);
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  });

  async function activated(seed: string, overrides = {}) {
    const lic = await createLicense(t, overrides);
    const fp = fingerprint(seed);
    await t
      .http()
      .post('/api/v1/activate')
      .send({ license_key: lic.license_key, machine_fingerprint: fp, hostname: `host-${seed}` })
      .expect(200);
    return { ...lic, fp };
  }

  const auditOf = async (licenseId: number, action: string) =>
    t.sql<{ actor_type: string; actor: string; details: Record<string, unknown> }>(
      'SELECT actor_type, actor, details FROM audit_entries WHERE license_id = $1 AND action = $2 ORDER BY id',
      [licenseId, action],
    );

  describe('POST /api/v1/license-file', () => {
    it('returns a file that verifies with node:crypto and with the openssl CLI, signed exactly as activation', async () => {
      const { license_key, fp, id } = await activated('file-roundtrip');
      const before = Date.now();
      const res = await t
        .http()
        .post('/api/v1/license-file')
        .send({ license_key: license_key.toLowerCase(), machine_fingerprint: fp })
        .expect(200);
      expect(Object.keys(res.body).sort()).toEqual(['file_expires_at', 'license_file']);
      const doc = decodeLicenseFile(res.body.license_file);
      expect(Object.keys(doc).sort()).toEqual(['license', 'signature']);
      expect(doc.license.license_key).toBe(license_key);
      expect(doc.license.machine_fingerprint).toBe(fp);
      expect(doc.license.file_expires_at).toBe(res.body.file_expires_at);
      const issued = Date.parse(doc.license.file_issued_at);
      expect(issued).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(doc.license.file_expires_at) - issued).toBe(30 * DAY);

      const bytes = Buffer.from(canonicalize(doc.license) as string, 'utf8');
      const raw = Buffer.from(doc.signature.replace(/^RSA-SHA256:/, ''), 'base64');
      expect(verify('sha256', bytes, createPublicKey(publicKeyPem), raw)).toBe(true);

      writeFileSync(join(dir, 'license.json'), bytes);
      writeFileSync(join(dir, 'sig.bin'), raw);
      const run = spawnSync('openssl', ['dgst', '-sha256', '-verify', 'public.pem', '-signature', 'sig.bin', 'license.json'], {
        cwd: dir,
        encoding: 'utf8',
      });
      expect(run.stdout).toMatch(/Verified OK/);

      const tampered = Buffer.from(canonicalize({ ...doc.license, file_expires_at: '2099-01-01T00:00:00.000Z' }) as string, 'utf8');
      expect(verify('sha256', tampered, createPublicKey(publicKeyPem), raw)).toBe(false);

      const [entry] = await auditOf(id, 'license.file_issued');
      expect(entry.actor_type).toBe('client');
      expect(entry.details).toMatchObject({ machine_fingerprint: fp, file_expires_at: doc.license.file_expires_at });
    });

    it('npm run verify-license accepts the file and checks its TTL', async () => {
      const { license_key, fp } = await activated('file-verify-script');
      const res = await t.http().post('/api/v1/license-file').send({ license_key, machine_fingerprint: fp }).expect(200);
      const path = join(dir, 'machine.lic');
      writeFileSync(path, res.body.license_file);
      const document = readDocument(path);
      expect(verifyLicenseDocument(document, publicKeyPem)).toEqual({ valid: true });
      const late = verifyLicenseDocument(document, publicKeyPem, new Date(Date.parse(res.body.file_expires_at) + 1000));
      expect(late).toEqual({ valid: false, reason: expect.stringContaining('licence file expired') });
      writeFileSync(path, res.body.license_file.replace(/\n[A-Za-z0-9+/]/, '\n!'));
      expect(() => readDocument(path)).toThrow('not a well-formed licence file');
      const edited = decodeLicenseFile(res.body.license_file);
      writeFileSync(path, JSON.stringify({ ...edited, license: { ...edited.license, machine_fingerprint: fingerprint('thief') } }));
      expect(verifyLicenseDocument(readDocument(path), publicKeyPem).valid).toBe(false);
    });

    it('the TTL comes from the merged policy: the licence overrides the product, the product the default of 30 days', async () => {
      const product = (
        await t.admin
          .post('/api/v1/admin/products')
          .send({ code: 'TTL_TEST', name: 'TTL test', key_prefix: 'TTL', default_policy: { license_file_ttl_days: 14 } })
          .expect(201)
      ).body as { id: number };
      const fromProduct = await activated('ttl-product', { product_code: 'TTL_TEST' });
      const fromLicense = await activated('ttl-license', { product_code: 'TTL_TEST', policy: { license_file_ttl_days: 3 } });
      for (const [lic, days] of [
        [fromProduct, 14],
        [fromLicense, 3],
      ] as const) {
        const res = await t
          .http()
          .post('/api/v1/license-file')
          .send({ license_key: lic.license_key, machine_fingerprint: lic.fp })
          .expect(200);
        const doc = decodeLicenseFile(res.body.license_file);
        expect(Date.parse(doc.license.file_expires_at) - Date.parse(doc.license.file_issued_at)).toBe(days * DAY);
        expect(doc.license.policy).toMatchObject({ license_file_ttl_days: days });
      }
      expect(product.id).toBeGreaterThan(0);
    });

    it('an unbound machine gets NOT_ACTIVATED, an unknown key INVALID_KEY', async () => {
      const { license_key } = await activated('file-unbound');
      const res = await t
        .http()
        .post('/api/v1/license-file')
        .send({ license_key, machine_fingerprint: fingerprint('someone-else') })
        .expect(400);
      expect(res.body.error.code).toBe('NOT_ACTIVATED');
      const unknown = await t
        .http()
        .post('/api/v1/license-file')
        .send({ license_key: 'POS-AAAAA-AAAAA-AAAAA-AAAAA', machine_fingerprint: fingerprint('x') });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.code).toBe('INVALID_KEY');
    });

    it.each([
      ['revoked', 'KEY_REVOKED'],
      ['suspended', 'KEY_SUSPENDED'],
      ['expired', 'KEY_EXPIRED'],
    ])('a %s licence gets %s, even for its bound machine', async (state, code) => {
      const { id, license_key, fp } = await activated(`file-${state}`);
      if (state === 'revoked') await t.admin.post(`/api/v1/admin/licenses/${id}/revoke`).send({ reason: 'test' }).expect(200);
      if (state === 'suspended') await t.admin.put(`/api/v1/admin/licenses/${id}`).send({ active: false }).expect(200);
      if (state === 'expired') await setLicenseExpiry(t, id, new Date(Date.now() - 30 * DAY), 0);
      const res = await t.http().post('/api/v1/license-file').send({ license_key, machine_fingerprint: fp }).expect(400);
      expect(res.body.error.code).toBe(code);
      expect(await auditOf(id, 'license.file_issued')).toHaveLength(0);
    });

    it('validates its body like validate', async () => {
      const res = await t
        .http()
        .post('/api/v1/license-file')
        .send({ license_key: 'POS-AAAAA-AAAAA-AAAAA-AAAAA', machine_fingerprint: 'md5:abc' })
        .expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.fields[0].field).toBe('machine_fingerprint');
    });
  });

  describe('POST /api/v1/admin/offline-activations', () => {
    it('binds the seat with the admin as actor and returns its licence file', async () => {
      const lic = await createLicense(t);
      const fp = fingerprint('airgap-1');
      const request = activationRequest({
        license_key: lic.license_key,
        machine_fingerprint: fp,
        hostname: 'plant-3',
        os: 'Windows 10 LTSC',
        app_version: '7.1',
      });
      const res = await t.admin.post('/api/v1/admin/offline-activations').send({ request }).expect(200);
      const doc = decodeLicenseFile(res.body.license_file);
      expect(doc.license.machine_fingerprint).toBe(fp);
      expect(
        verify(
          'sha256',
          Buffer.from(canonicalize(doc.license) as string),
          createPublicKey(publicKeyPem),
          Buffer.from(doc.signature.slice(11), 'base64'),
        ),
      ).toBe(true);

      const seats = (await t.admin.get(`/api/v1/admin/licenses/${lic.id}/activations`).expect(200)).body;
      expect(seats).toHaveLength(1);
      expect(seats[0]).toMatchObject({
        machine_fingerprint: fp,
        hostname: 'plant-3',
        os: 'Windows 10 LTSC',
        app_version: '7.1',
        active: true,
      });
      const [activatedEntry] = await auditOf(lic.id, 'license.activated');
      expect(activatedEntry.actor_type).toBe('admin_api');
      const [fileEntry] = await auditOf(lic.id, 'license.file_issued');
      expect(fileEntry.actor_type).toBe('admin_api');

      // The machine can then use the client API online too: it holds the seat.
      const validation = await t
        .http()
        .post('/api/v1/validate')
        .send({ license_key: lic.license_key, machine_fingerprint: fp })
        .expect(200);
      expect(validation.body.valid).toBe(true);
    });

    it('tolerates CRLF, blank lines, a byte-order mark and a lower-case key, as e-mail and editors deliver them', async () => {
      const lic = await createLicense(t);
      const request =
        '\uFEFF\r\n' +
        activationRequest({
          license_key: ` ${lic.license_key.toLowerCase()} `,
          machine_fingerprint: fingerprint('crlf').toUpperCase().replace('SHA256', 'sha256'),
          hostname: 'h',
        }).replace(/\n/g, '\r\n\r\n');
      await t.admin.post('/api/v1/admin/offline-activations').send({ request }).expect(200);
    });

    it('uses the checks, order and codes of /activate', async () => {
      const lic = await createLicense(t, { product_code: 'POS_RETAIL' });
      await t
        .http()
        .post('/api/v1/activate')
        .send({ license_key: lic.license_key, machine_fingerprint: fingerprint('online-first'), hostname: 'online' })
        .expect(200);
      const full = await t.admin
        .post('/api/v1/admin/offline-activations')
        .send({ request: activationRequest({ license_key: lic.license_key, machine_fingerprint: fingerprint('late'), hostname: 'late' }) })
        .expect(400);
      expect(full.body.error.code).toBe('ALREADY_ACTIVATED');
      expect(full.body.error.details.activated_on).toBe('online');

      const mismatch = await t.admin
        .post('/api/v1/admin/offline-activations')
        .send({
          request: activationRequest({
            license_key: lic.license_key,
            machine_fingerprint: fingerprint('m'),
            hostname: 'm',
            product: 'ERP_SUITE',
          }),
        })
        .expect(400);
      expect(mismatch.body.error.code).toBe('PRODUCT_MISMATCH');

      const unknown = await t.admin
        .post('/api/v1/admin/offline-activations')
        .send({
          request: activationRequest({ license_key: 'POS-AAAAA-AAAAA-AAAAA-AAAAA', machine_fingerprint: fingerprint('u'), hostname: 'u' }),
        })
        .expect(400);
      expect(unknown.body.error.code).toBe('INVALID_KEY');
    });

    it('races safely with an online activation for the last seat: exactly one wins', async () => {
      for (let round = 0; round < 5; round++) {
        const lic = await createLicense(t);
        const [offline, online] = await Promise.all([
          t.admin.post('/api/v1/admin/offline-activations').send({
            request: activationRequest({
              license_key: lic.license_key,
              machine_fingerprint: fingerprint(`race-off-${round}`),
              hostname: 'offline',
            }),
          }),
          t
            .http()
            .post('/api/v1/activate')
            .send({ license_key: lic.license_key, machine_fingerprint: fingerprint(`race-on-${round}`), hostname: 'online' }),
        ]);
        expect([offline.status, online.status].sort()).toEqual([200, 400]);
        const loser = offline.status === 400 ? offline : online;
        expect(loser.body.error.code).toBe('ALREADY_ACTIVATED');
        const [{ n }] = await t.sql<{ n: number }>(
          'SELECT count(*)::int AS n FROM activations WHERE license_id = $1 AND released_at IS NULL',
          [lic.id],
        );
        expect(n).toBe(1);
      }
    });

    const validBody = { license_key: 'POS-AAAAA-AAAAA-AAAAA-AAAAA', machine_fingerprint: fingerprint('bad'), hostname: 'h' };
    const base64Of = (text: string) => Buffer.from(text).toString('base64');
    it.each([
      ['no armor at all', 'hello'],
      ['a licence file instead of a request', activationRequest(validBody).replace(/ACTIVATION REQUEST/g, 'LICENSE FILE')],
      ['a missing end marker', activationRequest(validBody).replace('-----END ACTIVATION REQUEST-----', '')],
      ['text outside base64', activationRequest(validBody).replace(/\n(.)/, '\n*$1')],
      ['base64 that is not JSON', `-----BEGIN ACTIVATION REQUEST-----\n${base64Of('not json {')}\n-----END ACTIVATION REQUEST-----`],
      [
        'base64 of invalid UTF-8',
        `-----BEGIN ACTIVATION REQUEST-----\n${Buffer.from([0x7b, 0xff, 0xfe, 0x7d]).toString('base64')}\n-----END ACTIVATION REQUEST-----`,
      ],
      ['JSON that is an array', `-----BEGIN ACTIVATION REQUEST-----\n${base64Of('[1,2]')}\n-----END ACTIVATION REQUEST-----`],
      ['an empty body', '-----BEGIN ACTIVATION REQUEST-----\n-----END ACTIVATION REQUEST-----'],
      ['oversize text', activationRequest({ ...validBody, hostname: 'x'.repeat(20_000) })],
    ])('%s → 400 VALIDATION_ERROR naming request, nothing stored', async (_label, request) => {
      const seatsBefore = await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM activations');
      const res = await t.admin.post('/api/v1/admin/offline-activations').send({ request }).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.fields[0].field).toBe('request');
      expect(await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM activations')).toEqual(seatsBefore);
    });

    it.each([
      ['a bad fingerprint', 'request.machine_fingerprint', { ...validBody, machine_fingerprint: 'sha256:xyz' }],
      ['no hostname', 'request.hostname', { license_key: validBody.license_key, machine_fingerprint: validBody.machine_fingerprint }],
      ['a number for a string', 'request.hostname', { ...validBody, hostname: 7 }],
      ['a NUL in the hostname', 'request.hostname', { ...validBody, hostname: 'a\u0000b' }],
    ])('the body of /activate is checked by its rules: %s → %s', async (_label, field, body) => {
      const res = await t.admin
        .post('/api/v1/admin/offline-activations')
        .send({ request: activationRequest(body) })
        .expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    });

    it.each([
      ['no request', {}],
      ['a number', { request: 5 }],
      ['an unknown field', { request: 'x', extra: true }],
    ])('%s → 400 VALIDATION_ERROR', async (_label, body) => {
      const res = await t.admin.post('/api/v1/admin/offline-activations').send(body).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    });

    it('a token limited to other products cannot bind this licence: INVALID_KEY, nothing stored', async () => {
      const lic = await createLicense(t, { product_code: 'POS_RETAIL' });
      const token = (
        await t.admin
          .post('/api/v1/admin/tokens')
          .send({ name: 'erp-shop', scopes: ['licenses:write'], products: ['ERP_SUITE'] })
          .expect(201)
      ).body.token as string;
      const request = activationRequest({ license_key: lic.license_key, machine_fingerprint: fingerprint('scoped'), hostname: 'h' });
      const res = await t.http().post('/api/v1/admin/offline-activations').set('X-API-Key', token).send({ request }).expect(400);
      expect(res.body.error.code).toBe('INVALID_KEY');
      const [{ n }] = await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM activations WHERE license_id = $1', [lic.id]);
      expect(n).toBe(0);
    });

    it('needs the admin key', async () => {
      await t
        .http()
        .post('/api/v1/admin/offline-activations')
        .send({ request: activationRequest(validBody) })
        .expect(401);
    });
  });
});
