import { createPrivateKey, createPublicKey, generateKeyPairSync, KeyObject } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { algorithmOfKey, signEndorsement } from '../signing/envelope';
import { keyIdOf } from '../signing/license-signature';

const USAGE = `Usage:
  licence-server endorse-key --new-root <root.pem> [--algorithm Ed25519|RSA-SHA256]
      creates an offline root key (PKCS#8 PEM, never on a server) and prints its public key to ship with your application
  licence-server endorse-key --root <root.pem> --public-key <key.pem>
      signs the endorsement of a keyring key (its PEM from GET /api/v1/public-keys) with the root key, offline, and prints
      the JSON body for POST /api/v1/admin/signing-keys/<key_id>/endorsements

Exit 2: wrong arguments or unreadable keys.`;

class UsageError extends Error {}

/** The admin route's body for one endorsement by `root` (a private key) of the key `publicKeyPem`, and the key it is for. */
export function endorsementBody(root: KeyObject, publicKeyPem: string): { key_id: string; public_key_pem: string; signature: string } {
  const key = createPublicKey(publicKeyPem);
  return {
    key_id: keyIdOf(key),
    public_key_pem: createPublicKey(root).export({ type: 'spki', format: 'pem' }).toString(),
    signature: signEndorsement(key, root),
  };
}

/** A new root key pair of `algorithm`: the private PEM to keep offline and the public PEM to ship. */
export function newRootKey(algorithm: string): { privatePem: string; publicPem: string; keyId: string } {
  const pair =
    algorithm === 'Ed25519'
      ? generateKeyPairSync('ed25519')
      : algorithm === 'RSA-SHA256'
        ? generateKeyPairSync('rsa', { modulusLength: 3072 })
        : undefined;
  if (!pair) throw new UsageError(`--algorithm must be Ed25519 or RSA-SHA256, not ${algorithm}`);
  return {
    privatePem: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicPem: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    keyId: keyIdOf(pair.publicKey),
  };
}

function option(argv: string[], name: string): string | undefined {
  const at = argv.indexOf(name);
  if (at === -1) return undefined;
  const value = argv[at + 1];
  if (!value || value.startsWith('--')) throw new UsageError(`${name} needs a value`);
  return value;
}

/**
 * `licence-server endorse-key` (docs/signing.md, Endorsed rotation): runs the command and returns the exit code; a wrong
 * argument is one line on `err` and exit 2.
 */
export function endorseKeyCommand(argv: string[], out: (line: string) => void, err: (line: string) => void): number {
  try {
    if (argv.includes('--help') || argv.includes('-h')) {
      out(USAGE);
      return 0;
    }
    const known = ['--new-root', '--algorithm', '--root', '--public-key'];
    const unknown = argv.filter((arg, i) => arg.startsWith('--') && !known.includes(arg) && !known.includes(argv[i - 1]));
    if (unknown.length > 0) throw new UsageError(`unknown option ${unknown[0]}`);
    const newRoot = option(argv, '--new-root');
    if (newRoot) {
      if (existsSync(newRoot)) throw new UsageError(`${newRoot} exists: a root key is never overwritten`);
      const root = newRootKey(option(argv, '--algorithm') ?? 'Ed25519');
      writeFileSync(newRoot, root.privatePem, { mode: 0o600, flag: 'wx' });
      out(root.publicPem.trimEnd());
      err(`root key ${root.keyId} written to ${newRoot}: keep it offline; ship the public key above with your application`);
      return 0;
    }
    const rootFile = option(argv, '--root');
    const keyFile = option(argv, '--public-key');
    if (!rootFile || !keyFile) throw new UsageError('give --root and --public-key (or --new-root)');
    let root: KeyObject;
    try {
      root = createPrivateKey(readFileSync(rootFile, 'utf8'));
    } catch (e) {
      throw new UsageError(`${rootFile} is not a PEM private key (${(e as Error).message})`);
    }
    if (!algorithmOfKey(root)) throw new UsageError(`${rootFile} must be an RSA or Ed25519 private key`);
    let body: ReturnType<typeof endorsementBody>;
    try {
      body = endorsementBody(root, readFileSync(keyFile, 'utf8'));
    } catch (e) {
      throw new UsageError(`${keyFile} is not a PEM public key (${(e as Error).message})`);
    }
    out(JSON.stringify({ public_key_pem: body.public_key_pem, signature: body.signature }));
    err(`POST it to /api/v1/admin/signing-keys/${body.key_id}/endorsements`);
    return 0;
  } catch (e) {
    err(`endorse-key: ${(e as Error).message}${e instanceof UsageError ? ' (licence-server endorse-key --help)' : ''}`);
    return 2;
  }
}
