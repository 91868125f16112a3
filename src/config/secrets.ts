import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from './config.error';

/**
 * Reads a secret from DATA_DIR, creating it with `generate()` on first use.
 * Returns whether it was generated now, so the caller prints it once.
 */
export function loadOrCreateSecret(dataDir: string, fileName: string, generate: () => string): { value: string; generated: boolean } {
  const path = join(dataDir, fileName);
  if (existsSync(path)) {
    let value: string;
    try {
      value = readFileSync(path, 'utf8').trim();
    } catch (err) {
      throw new ConfigError(`Cannot read ${path}: ${(err as Error).message}`);
    }
    if (value) return { value, generated: false };
  }
  const value = generate();
  try {
    mkdirSync(dataDir, { recursive: true });
    if (!writeFileExclusive(path, value + '\n')) return loadOrCreateSecret(dataDir, fileName, generate);
  } catch (err) {
    throw new ConfigError(`DATA_DIR: cannot write ${path}: ${(err as Error).message}`);
  }
  return { value, generated: true };
}

/**
 * Creates `path` with `content` (mode 0600) atomically: written to a temporary file, then hard-linked
 * into place, so instances sharing DATA_DIR never read a half-written file and never overwrite each other.
 * Returns false when the file already existed (another instance won).
 */
export function writeFileExclusive(path: string, content: string | Buffer): boolean {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, content, { mode: 0o600 });
  try {
    linkSync(tmp, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    unlinkSync(tmp);
  }
}

export const generateApiKey = () => 'lsk_' + randomBytes(32).toString('base64url');
export const generateSessionSecret = () => randomBytes(48).toString('base64url');
export const generateKeyringSecret = () => randomBytes(48).toString('base64url');
export const generatePassword = () => randomBytes(15).toString('base64url');
