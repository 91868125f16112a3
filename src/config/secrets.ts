import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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
    writeFileSync(path, value + '\n', { mode: 0o600 });
  } catch (err) {
    throw new ConfigError(`DATA_DIR: cannot write ${path}: ${(err as Error).message}`);
  }
  return { value, generated: true };
}

export const generateApiKey = () => 'lsk_' + randomBytes(32).toString('base64url');
export const generateSessionSecret = () => randomBytes(48).toString('base64url');
export const generatePassword = () => randomBytes(15).toString('base64url');
