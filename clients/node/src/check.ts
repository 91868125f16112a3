import { dearmor, LICENSE_FILE_LABEL } from './armor.js';
import { KeySet, verifySignature } from './crypto.js';
import { sameJson, verifyEnvelope } from './envelope.js';
import type { ClientState } from './state.js';
import type { CheckReason, CheckResult, LicensePayload, SignedLicense } from './types.js';

const DAY_MS = 86_400_000;

export interface OfflineCheckInput {
  state: ClientState;
  keys: KeySet;
  /** Key ids the server stopped publishing or lists as revoked (only filled with `fetchServerKeys`). */
  withdrawnKeyIds?: readonly string[];
  fingerprint: string;
  product?: string;
  now: Date;
  clockToleranceSeconds: number;
  maxOfflineDays?: number;
}

export type VerifiedDocument = { ok: true; license: LicensePayload } | { ok: false; reason: CheckReason; message: string };

/**
 * Verifies `{license, signature}` against the key its `key_id` names; a document with an envelope (an answer asked for
 * with `envelopes: true`, a version 2 licence file) by its envelope, and its `license` must equal the decoded payload.
 */
export type VerifiedAnswer = { ok: true } | { ok: false; reason: string; message: string };

/**
 * A signed answer (validate, usage, update check) as its request's answer: signed by a trusted key (with `envelopes`,
 * the envelope is decoded and verified and the answer's members must be exactly the signed ones; else the legacy
 * signature over the answer's RFC 8785 form), echoing the nonce, about this licence and machine.
 */
export function verifyAnswerDocument(
  answer: unknown,
  nonce: string,
  seat: { license_key: string; machine_fingerprint: string },
  keys: KeySet,
  revoked: readonly string[],
  envelopes: boolean,
  what = 'signed',
): VerifiedAnswer {
  const refuse = (reason: string, message: string): VerifiedAnswer => ({ ok: false, reason, message });
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
    return refuse('MALFORMED_ENVELOPE', `the ${what} answer is not a JSON object`);
  const { signature, envelope, ...signed } = answer as Record<string, unknown>;
  if (envelopes) {
    if (envelope === undefined) return refuse('UNSUPPORTED_FORMAT', `the ${what} answer carries no envelope`);
    // Decode, verify, then compare: the answer's fields must be exactly the signed ones.
    const opened = verifyEnvelope(envelope, (id) => keys.get(id), revoked);
    if (!opened.ok) return refuse(opened.reason, `the ${what} answer's envelope: ${opened.message}`);
    if (!sameJson(opened.value, signed)) return refuse('PAYLOAD_MISMATCH', `the ${what} answer differs from its envelope`);
  } else {
    const key = keys.get(signed.key_id);
    if (!key) return refuse('UNKNOWN_KEY', `the ${what} answer is signed with unknown key ${String(signed.key_id)}`);
    if (typeof signature !== 'string' || !verifySignature(signed, signature, key))
      return refuse('INVALID_SIGNATURE', `the ${what} answer does not verify`);
  }
  if (signed.nonce !== nonce) return refuse('NONCE_MISMATCH', `the ${what} answer is not for this request (replayed?)`);
  if (signed.license_key !== seat.license_key || signed.machine_fingerprint !== seat.machine_fingerprint) {
    return refuse('WRONG_SUBJECT', `the ${what} answer is about another licence or machine`);
  }
  return { ok: true };
}

export function verifyDocument(document: unknown, keys: KeySet, revoked: readonly string[] = []): VerifiedDocument {
  if (!isSignedLicense(document)) return { ok: false, reason: 'INVALID_SIGNATURE', message: 'not a signed licence document' };
  if (document.envelope !== undefined) {
    const opened = verifyEnvelope(document.envelope, (id) => keys.get(id), revoked);
    if (!opened.ok) return opened;
    if (!sameJson(opened.value, document.license)) {
      return { ok: false, reason: 'PAYLOAD_MISMATCH', message: 'the licence differs from the signed payload of its envelope' };
    }
    return { ok: true, license: document.license };
  }
  const key = keys.get(document.license.key_id);
  if (!key) {
    return {
      ok: false,
      reason: 'UNKNOWN_KEY',
      message: `signed with key ${String(document.license.key_id)}, which this client does not trust`,
    };
  }
  if (!verifySignature(document.license, document.signature, key)) {
    return { ok: false, reason: 'INVALID_SIGNATURE', message: 'the signature does not match the licence data' };
  }
  return { ok: true, license: document.license };
}

/**
 * A licence file for a client that accepts envelopes only: version 1 (no `envelope`) is `UNSUPPORTED_FORMAT`; version 2
 * is verified by its envelope, and its `license` must equal the decoded payload.
 */
export function verifyEnvelopeFile(text: string, keys: KeySet, revoked: readonly string[] = []): VerifiedDocument {
  const document = parseLicenseFile(text);
  if (!document) return { ok: false, reason: 'MALFORMED_ENVELOPE', message: 'not a licence file' };
  if (document.envelope === undefined) {
    return { ok: false, reason: 'UNSUPPORTED_FORMAT', message: 'a version 1 licence file (no envelope); ask for envelope: true' };
  }
  return verifyDocument(document, keys, revoked);
}

/** Decodes a licence file (docs/client-api.md, Licence file) into `{license, signature}`, or undefined when the armor is malformed. */
export function parseLicenseFile(text: string): SignedLicense | undefined {
  const document = dearmor(LICENSE_FILE_LABEL, text);
  return isSignedLicense(document) ? document : undefined;
}

/** The latest server time among the signed times a document carries. */
export function signedTimeOf(license: LicensePayload): number {
  return Math.max(...[license.signed_at, license.file_issued_at, license.activated_at].map(time));
}

/**
 * The offline decision, pure: which stored document, is it genuine and for this machine, is the local clock
 * plausible, is the file still fresh, and the status from `expires_at` + `grace_days` (docs/licences.md, Status and grace).
 */
export function checkOffline(input: OfflineCheckInput): CheckResult {
  const { state, now } = input;
  let source: 'license_file' | 'activation';
  let document: unknown;
  if (state.license_file !== undefined) {
    source = 'license_file';
    document = parseLicenseFile(state.license_file);
    if (!document) return refuse('INVALID_SIGNATURE', 'the stored licence file is malformed');
  } else if (state.activation !== undefined) {
    source = 'activation';
    document = state.activation;
  } else {
    return refuse('NO_LICENSE', 'no licence is stored on this machine');
  }

  const keyId = (document as { license?: { key_id?: unknown } } | undefined)?.license?.key_id;
  if (typeof keyId === 'string' && input.withdrawnKeyIds?.includes(keyId)) {
    return refuse('KEY_REVOKED', `signed with key ${keyId}, which the server no longer publishes (revoked)`);
  }
  const verified = verifyDocument(document, input.keys, input.withdrawnKeyIds);
  if (!verified.ok) return verified;
  const license = verified.license;
  if (license.machine_fingerprint !== input.fingerprint) {
    return refuse('FINGERPRINT_MISMATCH', 'the licence was issued to another machine', license);
  }
  if (input.product !== undefined && license.product !== input.product) {
    return refuse('PRODUCT_MISMATCH', `the licence is for product ${license.product}`, license);
  }

  const latestSigned = Math.max(signedTimeOf(license), time(state.latest_signed_at));
  if (now.getTime() < latestSigned - input.clockToleranceSeconds * 1000) {
    return refuse(
      'CLOCK_TAMPERED',
      `the local clock is earlier than a time the server signed (${new Date(latestSigned).toISOString()})`,
      license,
    );
  }

  const validation = state.last_validation;
  if (validation && !validation.valid && time(validation.checked_at) >= signedTimeOf(license)) {
    return refuse('INVALIDATED', `the server answered ${validation.code ?? validation.status} at ${validation.checked_at}`, license);
  }

  // A floating seat (docs/licences.md, Seat policies): the server releases it once no heartbeat came within the timeout.
  const heartbeatTimeout = license.policy?.heartbeat_timeout_seconds;
  if (typeof heartbeatTimeout === 'number') {
    const seenAt = Math.max(time(state.seat_seen_at), time(license.activated_at));
    if (state.seat_lost && time(state.seat_lost.at) >= seenAt) {
      return refuse('SEAT_LOST', `the server answered ${state.seat_lost.code} to a heartbeat: the seat was released`, license);
    }
    if (now.getTime() - seenAt > heartbeatTimeout * 1000) {
      return refuse(
        'HEARTBEAT_OVERDUE',
        `no successful heartbeat for more than ${heartbeatTimeout} s: the server releases the seat`,
        license,
      );
    }
  }

  const fileExpiresAt = license.file_expires_at ? new Date(license.file_expires_at) : null;
  if (source === 'license_file' && (!fileExpiresAt || now > fileExpiresAt)) {
    return refuse('FILE_EXPIRED', `the licence file expired at ${license.file_expires_at ?? '(no expiry)'}; fetch a new one`, license);
  }
  if (input.maxOfflineDays !== undefined && now.getTime() - latestSigned > input.maxOfflineDays * DAY_MS) {
    return refuse('OFFLINE_TOO_LONG', `no signed answer from the server for more than ${input.maxOfflineDays} days`, license);
  }

  const expiresAt = license.expires_at ? new Date(license.expires_at) : null;
  const graceEndsAt = expiresAt ? new Date(expiresAt.getTime() + license.grace_days * DAY_MS) : null;
  if (graceEndsAt && now > graceEndsAt) return refuse('EXPIRED', `the licence expired at ${license.expires_at}`, license);
  const status = expiresAt && now > expiresAt ? 'grace' : 'active';
  return { ok: true, status, license, source, expiresAt, graceEndsAt, fileExpiresAt };
}

function refuse(reason: CheckReason, message: string, license?: LicensePayload): CheckResult {
  return license ? { ok: false, reason, message, license } : { ok: false, reason, message };
}

function time(value: unknown): number {
  const ms = typeof value === 'string' ? Date.parse(value) : NaN;
  return Number.isNaN(ms) ? -Infinity : ms;
}

function isSignedLicense(value: unknown): value is SignedLicense {
  if (typeof value !== 'object' || value === null) return false;
  const { license, signature } = value as Record<string, unknown>;
  return typeof signature === 'string' && typeof license === 'object' && license !== null && !Array.isArray(license);
}
