import { randomBytes } from 'node:crypto';

/** Crockford base32: digits and upper-case letters without I, L, O, U. */
export const CROCKFORD_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const GROUPS = 4;
const GROUP_LENGTH = 5;

/**
 * `{prefix}-XXXXX-XXXXX-XXXXX-XXXXX`: 20 Crockford base32 characters, 5 bits each from a
 * CSPRNG (100 bits of entropy). Each random byte's low 5 bits are used, so there is no bias.
 */
export function generateLicenseKey(prefix: string): string {
  const bytes = randomBytes(GROUPS * GROUP_LENGTH);
  const groups: string[] = [];
  for (let g = 0; g < GROUPS; g++) {
    let group = '';
    for (let i = 0; i < GROUP_LENGTH; i++) group += CROCKFORD_ALPHABET[bytes[g * GROUP_LENGTH + i] & 31];
    groups.push(group);
  }
  return `${prefix}-${groups.join('-')}`;
}

export const LICENSE_KEY_PATTERN =
  /^[A-Z0-9]{2,8}-[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}$/;

/** Keys are case-insensitive on input: trimmed and upper-cased (docs/licences.md, Licence keys). */
export function normalizeLicenseKey(input: string): string {
  return input.trim().toUpperCase();
}
