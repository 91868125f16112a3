import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyLicenseCommand } from '../src/cli/verify-license';
import { createLicense, fingerprint } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

// Start-up of the app and RSA key generation (rotations) take seconds on a busy machine.
jest.setTimeout(30_000);

/** `npm run verify-license` against a live server: keys picked by key_id from /public-keys or a JWK Set file. */
describe('npm run verify-license', () => {
  let t: TestApp;
  let dir: string;
  let server: string;
  let licenseKey: string;
  const fp = fingerprint('verify-license');

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen(0, '127.0.0.1');
    server = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    dir = mkdtempSync(join(tmpdir(), 'verify-license-'));
    licenseKey = (await createLicense(t)).license_key;
  }, 60_000);
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  });

  const save = (name: string, value: unknown) => {
    const file = join(dir, name);
    writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
    return file;
  };
  const run = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await verifyLicenseCommand(
      argv,
      (l) => out.push(l),
      (l) => err.push(l),
    );
    return { code, out: out.join('\n'), err: err.join('\n') };
  };
  const activate = async () =>
    (await t.http().post('/api/v1/activate').send({ license_key: licenseKey, machine_fingerprint: fp, hostname: 'h' }).expect(200))
      .body as {
      license: Record<string, unknown>;
      signature: string;
    };

  it('verifies an activation payload with the key the server publishes under its key_id; a changed one is invalid', async () => {
    const payload = save('payload.json', await activate());
    expect(await run(payload, '--server', server)).toMatchObject({ code: 0, out: 'valid' });
    const signed = await activate();
    const tampered = save('tampered.json', { ...signed, license: { ...signed.license, grace_days: 365 } });
    expect(await run(tampered, '--server', server)).toMatchObject({ code: 1, out: 'invalid' });
  });

  it('after a rotation the old payload verifies with the retired key from /public-keys and from a JWKS file; after revocation it does not', async () => {
    const old = save('old.json', await activate());
    const oldKeyId = (await t.http().get('/api/v1/public-key')).body.key_id as string;
    await t.admin.post('/api/v1/admin/signing-keys/rotate').expect(201);
    expect(await run(old, '--server', server)).toMatchObject({ code: 0, out: 'valid' });
    const jwks = save('jwks.json', (await t.http().get('/.well-known/jwks.json').expect(200)).body);
    expect(await run(old, '--jwks', jwks)).toMatchObject({ code: 0, out: 'valid' });
    const fresh = save('fresh.json', await activate());
    expect(await run(fresh, '--jwks', jwks)).toMatchObject({ code: 0, out: 'valid' });
    // A PEM file is that one key: the old payload names another.
    const pem = save('active.pem', (await t.http().get('/api/v1/public-key')).body.public_key_pem as string);
    expect(await run(old, '--public-key', pem)).toMatchObject({ code: 1, err: expect.stringContaining(`signed with key ${oldKeyId}`) });

    await t.admin.post(`/api/v1/admin/signing-keys/${oldKeyId}/revoke`).send({}).expect(200);
    const result = await run(old, '--server', server);
    expect(result).toMatchObject({ code: 1, out: 'invalid' });
    expect(result.err).toMatch(new RegExp(`key ${oldKeyId} is not among the published keys`));
    const jwksAfter = save('jwks-after.json', (await t.http().get('/.well-known/jwks.json').expect(200)).body);
    expect((await run(old, '--jwks', jwksAfter)).code).toBe(1);
  });

  it('verifies a signed validate answer against the nonce the caller expects', async () => {
    const nonce = 'verify-license-nonce-42';
    const answer = (await t.http().post('/api/v1/validate').send({ license_key: licenseKey, machine_fingerprint: fp, nonce }).expect(200))
      .body;
    const file = save('answer.json', answer);
    expect(await run(file, '--nonce', nonce, '--server', server)).toMatchObject({ code: 0, out: 'valid' });
    const pem = save('pem-for-answer.pem', (await t.http().get('/api/v1/public-key')).body.public_key_pem as string);
    expect(await run(file, '--nonce', nonce, '--public-key', pem)).toMatchObject({ code: 0, out: 'valid' });
    expect(await run(file, '--nonce', 'another-nonce-0000000', '--server', server)).toMatchObject({
      code: 1,
      err: expect.stringMatching(/nonce/),
    });
    const tampered = save('answer-tampered.json', { ...answer, valid: !answer.valid });
    expect(await run(tampered, '--nonce', nonce, '--server', server)).toMatchObject({ code: 1, out: 'invalid' });
    expect(await run(file, '--server', server)).toMatchObject({ code: 2, err: expect.stringMatching(/--nonce/) });
  });

  it('bad input: exit 2 with a reason', async () => {
    expect((await run()).code).toBe(2);
    expect((await run(save('x.json', 'not json'), '--server', server)).err).toMatch(/not JSON/);
    expect((await run('a.json', '--jwks', 'j.json', '--server', server)).err).toMatch(/one of --public-key, --jwks or --server/);
    expect((await run(save('y.json', {}), '--jwks', save('bad-jwks.json', { nope: 1 }))).err).toMatch(/not a JWK Set/);
  });
});
