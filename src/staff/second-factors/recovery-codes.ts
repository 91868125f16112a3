import { createHash, randomBytes } from 'node:crypto';

export const RECOVERY_CODE_COUNT = 10;
// Crockford-style alphabet without I, L, O, U: nothing to misread when typed from paper.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** Ten new codes of 16 characters (80 random bits each), shown once as xxxx-xxxx-xxxx-xxxx (docs/dashboard.md, Recovery codes). */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const chars = Array.from(randomBytes(16), (b) => ALPHABET[b & 31]).join('');
    return chars.match(/.{4}/g)!.join('-');
  });
}

/** What a person typed, as stored: upper case, without spaces or dashes; null when it cannot be a recovery code. */
export function normaliseRecoveryCode(typed: string): string | null {
  const code = typed.toUpperCase().replace(/[\s-]/g, '');
  return /^[0-9A-HJKMNP-TV-Z]{16}$/.test(code) ? code : null;
}

/** SHA-256 is enough here: 80 random bits cannot be guessed from the hash, unlike a password. */
export function hashRecoveryCode(normalised: string): string {
  return createHash('sha256').update(normalised).digest('hex');
}
