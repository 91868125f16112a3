import canonicalize from 'canonicalize';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLicense, fingerprint } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

/** Checks signatures outside this codebase's crypto: with the openssl command line, as a client's build script would. */
/** The signed licence's members these tests tamper with; the rest pass through unchanged. */
type SignedLicense = Record<string, unknown> & { license_key: string; limits: Record<string, number>; features: string[] };

describe('licence signatures, verified independently with openssl', () => {
  let t: TestApp;
  let dir: string;
  let publicKey: { key_id: string; public_key_pem: string; algorithm: string };
  let signed: { license: SignedLicense; signature: string };

  beforeAll(async () => {
    t = await createTestApp();
    dir = mkdtempSync(join(tmpdir(), 'sig-'));
    publicKey = (await t.http().get('/api/v1/public-key').expect(200)).body;
    writeFileSync(join(dir, 'public.pem'), publicKey.public_key_pem);
    const lic = await createLicense(t, {
      customer_name: 'Šumadija Trgovina d.o.o. – "Ćevap" ✓',
      customer_email: 'it@example.rs',
      limits: { max_operators: 3 },
    });
    const res = await t
      .http()
      .post('/api/v1/activate')
      .send({ license_key: lic.license_key, machine_fingerprint: fingerprint('openssl'), hostname: 'h' })
      .expect(200);
    signed = res.body;
  }, 60_000);
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  });

  /** The README's steps: canonical JSON of `license` to a file, the base64 after `RSA-SHA256:` decoded to a file, then openssl dgst. */
  function opensslVerify(license: unknown, signature: string): { ok: boolean; output: string } {
    writeFileSync(join(dir, 'license.json'), canonicalize(license) as string, 'utf8');
    writeFileSync(join(dir, 'sig.bin'), Buffer.from(signature.replace(/^RSA-SHA256:/, ''), 'base64'));
    const run = spawnSync('openssl', ['dgst', '-sha256', '-verify', 'public.pem', '-signature', 'sig.bin', 'license.json'], {
      cwd: dir,
      encoding: 'utf8',
    });
    return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` };
  }

  it('openssl accepts the signature over the canonical bytes of `license`', () => {
    expect(signed.signature.startsWith('RSA-SHA256:')).toBe(true);
    const result = opensslVerify(signed.license, signed.signature);
    expect(result.output).toMatch(/Verified OK/);
    expect(result.ok).toBe(true);
  });

  it('the canonical form is RFC 8785: sorted keys, no whitespace, UTF-8 as is', () => {
    const text = canonicalize(signed.license) as string;
    expect(text.startsWith('{"activated_at":')).toBe(true);
    expect(text).not.toMatch(/\n|": /);
    expect(text).toContain('"customer":{"email":"it@example.rs","name":"Šumadija Trgovina d.o.o. – \\"Ćevap\\" ✓"}');
    // The order the server happened to send is irrelevant: re-ordering the members verifies too.
    const reordered = Object.fromEntries(Object.entries(signed.license).reverse());
    expect(opensslVerify(reordered, signed.signature).ok).toBe(true);
  });

  it.each([
    [
      'changing one character of the key',
      (l: SignedLicense) => ({ ...l, license_key: l.license_key.replace(/.$/, (c: string) => (c === 'A' ? 'B' : 'A')) }),
    ],
    ['moving the expiry', (l: SignedLicense) => ({ ...l, expires_at: '2099-01-01T00:00:00.000Z' })],
    ['raising a limit', (l: SignedLicense) => ({ ...l, limits: { ...l.limits, max_installations: 50 } })],
    ['changing the fingerprint', (l: SignedLicense) => ({ ...l, machine_fingerprint: fingerprint('other') })],
    ['adding a feature', (l: SignedLicense) => ({ ...l, features: [...l.features, 'EVERYTHING'] })],
    ['changing the key id', (l: SignedLicense) => ({ ...l, key_id: '0000000000000000' })],
  ])('%s makes verification fail', (_label, tamper) => {
    const result = opensslVerify(tamper(signed.license), signed.signature);
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/Verification failure/);
  });

  it('a changed signature fails verification', () => {
    const raw = Buffer.from(signed.signature.slice('RSA-SHA256:'.length), 'base64');
    raw[100] ^= 0x01;
    expect(opensslVerify(signed.license, 'RSA-SHA256:' + raw.toString('base64')).ok).toBe(false);
  });

  it('key_id inside the payload is the first 16 hex of SHA-256 over the DER public key, as openssl computes it', () => {
    const der = spawnSync('openssl', ['pkey', '-pubin', '-in', 'public.pem', '-outform', 'DER'], { cwd: dir });
    expect(der.status).toBe(0);
    const keyId = createHash('sha256').update(der.stdout).digest('hex').slice(0, 16);
    expect(publicKey).toMatchObject({ algorithm: 'RSA-SHA256', key_id: keyId });
    expect(signed.license.key_id).toBe(keyId);
  });

  it('openssl verifies a signed validate answer over the JCS bytes of the answer without `signature`, and refuses a changed one', async () => {
    const nonce = 'openssl-nonce-0123456789';
    const res = await t
      .http()
      .post('/api/v1/validate')
      .send({ license_key: signed.license.license_key, machine_fingerprint: fingerprint('openssl'), nonce })
      .expect(200);
    const { signature, ...answer } = res.body as Record<string, unknown> & { signature: string };
    expect(answer).toMatchObject({ valid: true, nonce, key_id: publicKey.key_id });
    const result = opensslVerify(answer, signature);
    expect(result.output).toMatch(/Verified OK/);
    expect(result.ok).toBe(true);
    expect(opensslVerify({ ...answer, valid: false }, signature).ok).toBe(false);
    expect(opensslVerify({ ...answer, nonce: 'another-nonce-0123456789' }, signature).ok).toBe(false);
  });

  it('the key is RSA-2048', () => {
    const text = spawnSync('openssl', ['pkey', '-pubin', '-in', 'public.pem', '-noout', '-text'], { cwd: dir, encoding: 'utf8' });
    expect(text.stdout).toMatch(/Public-Key: \(2048 bit\)/);
  });
});
