import { Secret, TOTP } from 'otpauth';

/** RFC 6238 as authenticator apps expect it (docs/dashboard.md, Second factors): SHA-1, 6 digits, 30-second steps. */
export const TOTP_PERIOD_SECONDS = 30;
const TOTP_PARAMETERS = { algorithm: 'SHA1', digits: 6, period: TOTP_PERIOD_SECONDS } as const;
/** One step either side: a phone clock a little off still works, a code stays usable at most ~90 s. */
const TOTP_WINDOW = 1;

/** A new random 160-bit secret (RFC 4226's recommended length), as raw bytes. */
export function newTotpSecret(): Buffer {
  return Buffer.from(new Secret({ size: 20 }).bytes);
}

/** The otpauth:// URI an authenticator app scans: issuer "Licence server", label the username. */
export function totpUri(secret: Buffer, username: string, issuer: string): string {
  return new TOTP({ issuer, label: username, secret: new Secret({ buffer: toArrayBuffer(secret) }), ...TOTP_PARAMETERS }).toString();
}

/** The secret as the base32 text a person types when they cannot scan. */
export function totpSecretText(secret: Buffer): string {
  return new Secret({ buffer: toArrayBuffer(secret) }).base32;
}

/**
 * The 30-second step a code belongs to when it is valid now (within one step either side), else null. The caller
 * accepts it only when the step is later than the last one used, so a code never works twice.
 */
export function totpStep(secret: Buffer, code: string, now = Date.now()): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = TOTP.validate({
    token: code,
    secret: new Secret({ buffer: toArrayBuffer(secret) }),
    timestamp: now,
    window: TOTP_WINDOW,
    ...TOTP_PARAMETERS,
  });
  return delta === null ? null : Math.floor(now / 1000 / TOTP_PERIOD_SECONDS) + delta;
}

/** The code of a step (tests and the enrolment check use the same RFC 6238 implementation as sign-in). */
export function totpCode(secret: Buffer, now = Date.now()): string {
  return TOTP.generate({ secret: new Secret({ buffer: toArrayBuffer(secret) }), timestamp: now, ...TOTP_PARAMETERS });
}

function toArrayBuffer(bytes: Buffer): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}
