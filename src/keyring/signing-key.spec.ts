import { createHash, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../config/config.error';
import { generateSigningKey, loadOrCreateSigningKey, parseSigningKey, readSigningKeyFile } from './signing-key';

describe('signing key', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'sk-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('generates an RSA-2048 PKCS#8 key on first start and loads the same key afterwards', () => {
    const path = join(dir, 'nested', 'signing-key.pem');
    const first = loadOrCreateSigningKey(path);
    expect(first.generated).toBe(true);
    expect(readFileSync(path, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(first.privateKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    const second = loadOrCreateSigningKey(path);
    expect(second.generated).toBe(false);
    expect(second.keyId).toBe(first.keyId);
  });

  it('derives key_id as the first 16 hex of SHA-256 over the DER SubjectPublicKeyInfo', () => {
    const key = loadOrCreateSigningKey(join(dir, 'k.pem'));
    const der = createPublicKey(key.publicKeyPem).export({ type: 'spki', format: 'der' });
    expect(key.keyId).toBe(createHash('sha256').update(der).digest('hex').slice(0, 16));
    expect(key.keyId).toMatch(/^[0-9a-f]{16}$/);
  });

  it('rejects a file that is not a PEM key', () => {
    const path = join(dir, 'bad.pem');
    writeFileSync(path, 'not a key');
    expect(() => loadOrCreateSigningKey(path)).toThrow(ConfigError);
    expect(() => loadOrCreateSigningKey(path)).toThrow(/SIGNING_KEY_FILE/);
  });

  it('rejects RSA keys of another size and non-RSA keys', () => {
    const rsa1024 = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(() => parseSigningKey(rsa1024)).toThrow(/RSA-2048/);
    expect(() => parseSigningKey(ec)).toThrow(/RSA-2048/);
  });

  it('fails clearly on an unreadable path', () => {
    expect(() => loadOrCreateSigningKey(dir)).toThrow(/SIGNING_KEY_FILE: cannot read/);
  });

  it('readSigningKeyFile: null without a file (the keyring then generates), the key when there is one', () => {
    expect(readSigningKeyFile(join(dir, 'missing.pem'))).toBeNull();
    const path = join(dir, 'k.pem');
    const created = loadOrCreateSigningKey(path);
    expect(readSigningKeyFile(path)?.keyId).toBe(created.keyId);
    writeFileSync(join(dir, 'bad.pem'), 'nope');
    expect(() => readSigningKeyFile(join(dir, 'bad.pem'))).toThrow(/SIGNING_KEY_FILE/);
  });

  it('generateSigningKey makes an RSA-2048 key off the event loop, named by its key_id', async () => {
    const key = await generateSigningKey();
    expect(key.privateKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    const der = createPublicKey(key.publicKeyPem).export({ type: 'spki', format: 'der' });
    expect(key.keyId).toBe(createHash('sha256').update(der).digest('hex').slice(0, 16));
  });
});
