import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  accessSync,
  closeSync,
  constants,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { canonicalBytes } from './crypto.js';
import { StateError } from './errors.js';
import type { JsonWebKeySet, SignedLicense } from './types.js';

/** Everything the client remembers between runs, in one file. */
export interface ClientState {
  version: 1;
  /** The last activation answer (verified before it was stored). */
  activation?: SignedLicense;
  /** The last licence file (armored text, verified before it was stored). */
  license_file?: string;
  /** The latest server time seen in a verified signature: the floor for the local clock. */
  latest_signed_at?: string;
  /** The last verified online validation, so an offline check knows a licence was revoked meanwhile. */
  last_validation?: { valid: boolean; status: string; code: string | null; checked_at: string };
  /** The keys the server published at the last refresh (only with `fetchServerKeys`); replaced, never merged. */
  server_keys?: JsonWebKeySet;
  /** Keys trusted through endorsement chains at the last refresh (only with `followEndorsements`). */
  endorsed_keys?: JsonWebKeySet;
  /** When `server_keys` (or `endorsed_keys`) was fetched (local clock). */
  server_keys_fetched_at?: string;
  /** Keys the server stopped publishing or lists as revoked: refused even when pinned (only with `fetchServerKeys`). */
  withdrawn_key_ids?: string[];
  /** Local time of the last activation or successful heartbeat: a floating seat dies without one (policy). */
  seat_seen_at?: string;
  /** The server answered a heartbeat with NOT_ACTIVATED or INVALID_KEY (the seat is gone) at this local time. */
  seat_lost?: { code: string; at: string };
}

export type LoadedState =
  | { kind: 'ok'; state: ClientState }
  | { kind: 'missing'; state: ClientState }
  | { kind: 'corrupt'; state: ClientState }
  | { kind: 'tampered'; state: ClientState };

const empty = (): ClientState => ({ version: 1 });

/**
 * The state file: JSON with an HMAC over its canonical form, written atomically (temporary file, fsync,
 * rename, fsync of the folder), so a crash leaves the old or the new file, never half of one.
 *
 * The HMAC key comes from the application (its salt and the machine fingerprint): it stops edits of the file
 * (rolling back the latest signed time, adding a key), not someone who takes the application apart. The
 * licence data itself is protected by the server's signature, which is checked on every read.
 */
export class StateFile {
  constructor(
    private readonly path: string,
    private readonly macKey: Buffer,
  ) {}

  /**
   * Makes sure the state file can be written: creates its folder (and missing parents) with mode 0700, and checks that it
   * is a folder this process may write. A StateError (`STATE_PATH`) otherwise (docs/clients.md, The state file).
   */
  prepare(): void {
    const folder = dirname(resolve(this.path));
    try {
      mkdirSync(folder, { recursive: true, mode: 0o700 });
      if (!statSync(folder).isDirectory()) throw new Error('not a folder');
      accessSync(folder, constants.W_OK);
    } catch (err) {
      throw new StateError(this.path, `the state file's folder ${folder} cannot be created or written: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  load(): LoadedState {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing', state: empty() };
      return { kind: 'corrupt', state: empty() };
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return { kind: 'corrupt', state: empty() };
    }
    if (!isObject(parsed) || !isObject(parsed.state) || typeof parsed.mac !== 'string' || parsed.state.version !== 1) {
      return { kind: 'corrupt', state: empty() };
    }
    const state = parsed.state as unknown as ClientState;
    const expected = this.mac(state);
    const given = Buffer.from(parsed.mac, 'base64');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { kind: 'tampered', state: empty() };
    return { kind: 'ok', state };
  }

  save(state: ClientState): void {
    try {
      this.write(state);
    } catch (err) {
      throw new StateError(this.path, `cannot write the state file ${this.path}: ${(err as Error).message}`, { cause: err });
    }
  }

  private write(state: ClientState): void {
    const text = JSON.stringify({ state, mac: this.mac(state).toString('base64') }, null, 2) + '\n';
    const temporary = join(dirname(this.path), `.${randomBytes(6).toString('hex')}.tmp`);
    const fd = openSync(temporary, 'w', 0o600);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      renameSync(temporary, this.path);
    } catch (err) {
      try {
        unlinkSync(temporary);
      } catch {
        // nothing left to clean
      }
      throw err;
    }
    syncFolder(dirname(this.path));
  }

  private mac(state: ClientState): Buffer {
    return createHmac('sha256', this.macKey).update(canonicalBytes(state)).digest();
  }
}

function syncFolder(folder: string): void {
  try {
    const fd = openSync(folder, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Windows cannot open a folder for fsync; the rename is still atomic there
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
