import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, KeyObject } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { keyIdOf } from '../signing/license-signature';
import type { VerifyingKey } from '../signing/envelope';

/** The relay's own Ed25519 key, PKCS#8 PEM in the data folder, readable by its owner only. */
export const RELAY_KEY_FILE = 'relay-key.pem';
const FINGERPRINT_SALT = 'licence-server-relay';

export interface RelayIdentity {
  privateKey: KeyObject;
  publicKeyPem: string;
  keyId: string;
}

/** Creates the data folder (mode 0700) if needed. */
export function ensureDataDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

/** The relay's key: made on first use (file mode 0600), the same key every time after. */
export function loadOrCreateKey(dir: string, create: boolean): RelayIdentity {
  const file = join(dir, RELAY_KEY_FILE);
  if (!existsSync(file)) {
    if (!create) throw new Error(`${file} does not exist: run \`relay init\` with this data folder first`);
    const { privateKey } = generateKeyPairSync('ed25519');
    writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
  }
  chmodSync(file, 0o600);
  const privateKey = createPrivateKey(readFileSync(file));
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`${file} is not an Ed25519 private key`);
  const publicKey = createPublicKey(privateKey);
  return { privateKey, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(), keyId: keyIdOf(publicKey) };
}

/**
 * The operating system's id of this installation (/etc/machine-id, else /var/lib/dbus/machine-id), or the host name
 * when neither exists: the rule of the Node client's machineId() (clients/node/src/fingerprint.ts) on Linux.
 */
export function machineId(): string {
  for (const file of ['/etc/machine-id', '/var/lib/dbus/machine-id']) {
    try {
      const id = readFileSync(file, 'utf8').trim();
      if (id) return id;
    } catch {
      // next
    }
  }
  return `hostname:${hostname()}`;
}

/** The relay machine's fingerprint (docs/relay.md, The relay's machine): SHA-256 of a fixed salt and the machine id. */
export function relayFingerprint(id: string = machineId()): string {
  return `sha256:${createHash('sha256').update(`${FINGERPRINT_SALT}\0${id}`, 'utf8').digest('hex')}`;
}

/**
 * The vendor's keys from a JWK Set file (GET /.well-known/jwks.json) or a `/api/v1/public-keys` answer: each entry
 * whose key id is its key's DER-SPKI id; a key listed as revoked is kept as revoked (a pool it signed is refused).
 */
export function readVendorKeys(file: string): Map<string, VerifyingKey> {
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file} is not a readable JSON file of the vendor's keys (${(err as Error).message})`, { cause: err });
  }
  const entries = (document as { keys?: unknown } | null)?.keys;
  const keys = new Map<string, VerifyingKey>();
  for (const entry of Array.isArray(entries) ? (entries as Record<string, unknown>[]) : []) {
    let key: KeyObject;
    try {
      key =
        typeof entry.public_key_pem === 'string'
          ? createPublicKey(entry.public_key_pem)
          : createPublicKey({ key: entry as never, format: 'jwk' });
    } catch {
      continue;
    }
    const keyId = keyIdOf(key);
    if ((entry.kid ?? entry.key_id) !== keyId) continue;
    keys.set(keyId, { key, revoked: entry.status === 'revoked' });
  }
  if (keys.size === 0)
    throw new Error(`${file} lists no usable vendor key (a JWK Set {"keys": [...]} as /.well-known/jwks.json publishes)`);
  return keys;
}
