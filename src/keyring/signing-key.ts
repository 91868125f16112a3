import { createPrivateKey, createPublicKey, generateKeyPair, generateKeyPairSync, KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { writeFileExclusive } from '../config/secrets';
import { dirname } from 'node:path';
import { ConfigError } from '../config/config.error';
import { algorithmOfKey, SigningAlgorithm } from '../signing/envelope';
import { keyIdOf } from '../signing/license-signature';

export interface SigningKey {
  privateKey: KeyObject;
  publicKeyPem: string;
  /** First 16 hex chars of SHA-256 over the DER SubjectPublicKeyInfo (docs/client-api.md, Public keys). */
  keyId: string;
  algorithm: SigningAlgorithm;
}

/**
 * A new key: RSA-2048 (the default) or Ed25519, generated on libuv's thread pool (RSA costs about 100 ms of CPU that the
 * event loop must not wait for).
 */
export function generateSigningKey(algorithm: SigningAlgorithm = 'RSA-SHA256'): Promise<SigningKey> {
  const done =
    (resolve: (key: SigningKey) => void, reject: (err: Error) => void) =>
    (err: Error | null, _publicKey: KeyObject, privateKey: KeyObject) => (err ? reject(err) : resolve(signingKeyOf(privateKey)));
  return new Promise((resolve, reject) =>
    algorithm === 'Ed25519'
      ? generateKeyPair('ed25519', undefined, done(resolve, reject))
      : generateKeyPair('rsa', { modulusLength: 2048 }, done(resolve, reject)),
  );
}

/** The PKCS#8 RSA-2048 key at `path` (SIGNING_KEY_FILE), or null when there is no such file. */
export function readSigningKeyFile(path: string): SigningKey | null {
  if (!existsSync(path)) return null;
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`SIGNING_KEY_FILE: cannot read ${path}: ${(err as Error).message}`);
  }
  return parseSigningKey(pem, path);
}

/** Loads the PKCS#8 RSA-2048 key at `path`, generating it there when the file does not exist (the benchmark's key file). */
export function loadOrCreateSigningKey(path: string): SigningKey & { generated: boolean } {
  let generated = false;
  if (!existsSync(path)) {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    try {
      mkdirSync(dirname(path), { recursive: true });
      // Another instance may create it at the same moment: then its key wins and is read below.
      generated = writeFileExclusive(path, privateKey.export({ type: 'pkcs8', format: 'pem' }));
    } catch (err) {
      throw new ConfigError(`SIGNING_KEY_FILE: cannot write ${path}: ${(err as Error).message}`);
    }
  }
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`SIGNING_KEY_FILE: cannot read ${path}: ${(err as Error).message}`);
  }
  return { ...parseSigningKey(pem, path), generated };
}

export function parseSigningKey(pem: string, source = 'key'): SigningKey {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch (err) {
    throw new ConfigError(`SIGNING_KEY_FILE: ${source} is not a PEM private key (${(err as Error).message})`);
  }
  const details = privateKey.asymmetricKeyDetails;
  if (privateKey.asymmetricKeyType !== 'rsa' || details?.modulusLength !== 2048) {
    throw new ConfigError(
      `SIGNING_KEY_FILE: ${source} must be an RSA-2048 private key, found ${privateKey.asymmetricKeyType} ${details?.modulusLength ?? ''}`.trim(),
    );
  }
  return signingKeyOf(privateKey);
}

function signingKeyOf(privateKey: KeyObject): SigningKey {
  const publicKey = createPublicKey(privateKey);
  return {
    privateKey,
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    keyId: keyIdOf(publicKey),
    algorithm: algorithmOfKey(privateKey) ?? 'RSA-SHA256',
  };
}
