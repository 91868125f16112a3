import { createHash, randomBytes } from 'node:crypto';

export const ADMIN_TOKEN_PREFIX = 'lst_';

/** `lst_` + 32 random bytes in base64url: 256 bits, so guessing is hopeless and a fast hash suffices. */
export const generateAdminToken = (): string => ADMIN_TOKEN_PREFIX + randomBytes(32).toString('base64url');

/**
 * SHA-256 hex of a token. A slow, salted password hash (Argon2) protects low-entropy secrets; a 256-bit random
 * token cannot be brute-forced from its digest anyway, and an unsalted digest can be looked up by a unique
 * index on every request (a salted one could not).
 */
export const adminTokenHash = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

export const looksLikeAdminToken = (credential: string): boolean => credential.startsWith(ADMIN_TOKEN_PREFIX);
