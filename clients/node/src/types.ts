/** The signed `license` object (docs/client-api.md, The signed licence; Licence file). Unknown members are kept as received. */
export interface LicensePayload {
  license_key: string;
  product: string;
  license_type: string;
  issued_at: string;
  expires_at: string | null;
  activated_at: string;
  machine_fingerprint: string;
  grace_days: number;
  limits: Record<string, number>;
  features: string[];
  customer: { name: string; email: string | null };
  key_id: string;
  signed_at?: string;
  policy?: LicensePolicy;
  file_issued_at?: string;
  file_expires_at?: string;
  [member: string]: unknown;
}

export interface LicensePolicy {
  heartbeat_timeout_seconds: number | null;
  max_deactivations_per_30_days: number | null;
  license_file_ttl_days: number;
  [member: string]: unknown;
}

/** What `/activate` returns and a licence file contains: the payload and `RSA-SHA256:<base64>` over its JCS bytes. */
export interface SignedLicense {
  license: LicensePayload;
  signature: string;
  /** With `envelopes: true` (and in a version 2 licence file): the same signature around the exact signed bytes. */
  envelope?: SignedEnvelope;
}

export type LicenseStatus = 'active' | 'grace' | 'expired' | 'suspended' | 'revoked';

/** A signed `/validate` answer (docs/client-api.md, Signed validation), verified by the client before it is returned. */
export interface ValidationAnswer {
  valid: boolean;
  status: LicenseStatus;
  expires_at: string | null;
  revoked: boolean;
  grace_ends_at: string | null;
  code: string | null;
  nonce: string;
  license_key: string;
  machine_fingerprint: string;
  checked_at: string;
  key_id: string;
  signature: string;
  [member: string]: unknown;
}

/** POST /api/v1/usage, verified: the count after this call (every count null when the licence is not metered). */
export interface UsageAnswer {
  uses: number | null;
  max_uses: number | null;
  remaining: number | null;
  period_start: string | null;
  period_end: string | null;
  nonce: string;
  license_key: string;
  machine_fingerprint: string;
  checked_at: string;
  key_id: string;
  signature: string;
  [member: string]: unknown;
}

export interface UsageOptions {
  /** Uses to count, 1..1000000 (default 1). */
  increment?: number;
  /**
   * 8-128 of A-Z a-z 0-9 _ -: one per logical use. Generated when omitted; pass your own to make a retry across
   * restarts count once (the server keeps it 24 hours).
   */
  idempotencyKey?: string;
}

/** What `checkForUpdate()` asks about (docs/releases.md in the server's repository). */
export interface UpdateQuery {
  /** The running version (SemVer 2.0). */
  currentVersion: string;
  /** `stable` (default), `beta` or `alpha`: a channel also offers the more stable ones. */
  channel?: 'stable' | 'beta' | 'alpha';
  /** Node's names: `linux`, `darwin`, `win32` (default: `process.platform`). */
  platform?: string;
  /** `x64`, `arm64` (default: `process.arch`). */
  arch?: string;
}

/** One downloadable file of an offered release: its signed size and digests (hex), and a short-lived link. */
export interface UpdateArtifact {
  filename: string;
  platform: string;
  arch: string;
  size: number;
  sha256: string;
  sha512: string;
  url: string;
  url_expires_at: string;
}

/** The release `checkForUpdate()` offers. */
export interface UpdateRelease {
  version: string;
  channel: 'stable' | 'beta' | 'alpha';
  notes: string;
  published_at: string;
  artifacts: UpdateArtifact[];
}

/** POST /api/v1/releases/check, verified like a validate answer: `update` is null when nothing newer may be had. */
export interface UpdateCheckAnswer {
  update: UpdateRelease | null;
  nonce: string;
  license_key: string;
  machine_fingerprint: string;
  checked_at: string;
  key_id: string;
  signature: string;
  [member: string]: unknown;
}

export interface HeartbeatAnswer {
  valid: boolean;
  status: LicenseStatus;
  code: string | null;
  heartbeat_timeout_seconds: number | null;
  next_heartbeat_before: string | null;
}

export interface DeactivationAnswer {
  message: string;
  can_reactivate: boolean;
}

export interface LicenseFileAnswer {
  license_file: string;
  file_expires_at: string;
  envelope?: SignedEnvelope;
}

/** A public key the client trusts, as `GET /api/v1/public-keys` lists it (only the PEM is required). */
export interface PublicKeyInput {
  key_id?: string;
  public_key_pem: string;
  status?: string;
  algorithm?: string;
  endorsements?: Endorsement[];
}

/** `GET /api/v1/public-keys`: the published keys, active first. */
export interface PublicKeyList {
  keys: PublicKeyInput[];
}

/** An RFC 7517 RSA public key as `/.well-known/jwks.json` serves it. */
export interface RsaJwk {
  kty: 'RSA';
  kid: string;
  n: string;
  e: string;
  alg?: string;
  use?: string;
  status?: string;
  endorsements?: Endorsement[];
}

/** An RFC 8037 Ed25519 public key as `/.well-known/jwks.json` serves it. */
export interface OkpJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  kid: string;
  x: string;
  alg?: string;
  use?: string;
  status?: string;
  endorsements?: Endorsement[];
}

export type PublicJwk = RsaJwk | OkpJwk;

export interface JsonWebKeySet {
  keys: PublicJwk[];
}

/** One endorsement of a key by another (docs/signing.md, Endorsed rotation): unpadded base64url by the endorsing key. */
export interface Endorsement {
  key_id: string;
  signature: string;
}

/** `{payload, alg, key_id, signature}` (docs/signing.md, Envelopes): the exact signed bytes and their signature, base64url. */
export interface SignedEnvelope {
  payload: string;
  alg: 'RS256' | 'EdDSA';
  key_id: string;
  signature: string;
}

/** Why an offline check refused, as a stable code (never a thrown string). */
export type CheckReason =
  | 'NO_LICENSE'
  | 'STATE_CORRUPT'
  | 'STATE_TAMPERED'
  | 'UNKNOWN_KEY'
  | 'INVALID_SIGNATURE'
  | 'FINGERPRINT_MISMATCH'
  | 'PRODUCT_MISMATCH'
  | 'EXPIRED'
  | 'FILE_EXPIRED'
  | 'CLOCK_TAMPERED'
  | 'OFFLINE_TOO_LONG'
  | 'INVALIDATED'
  | 'KEY_REVOKED'
  | 'HEARTBEAT_OVERDUE'
  | 'SEAT_LOST'
  | EnvelopeReason;

/** Why an envelope (or a version 2 licence file) is refused: the codes of docs/test-vectors/conformance.json. */
export type EnvelopeReason =
  | 'MALFORMED_ENVELOPE'
  | 'NON_CANONICAL_ENCODING'
  | 'ALG_MISMATCH'
  | 'MALFORMED_PAYLOAD'
  | 'PAYLOAD_MISMATCH'
  | 'UNSUPPORTED_FORMAT'
  | 'UNKNOWN_KEY'
  | 'KEY_REVOKED'
  | 'INVALID_SIGNATURE';

/** Why a key a server lists is not trusted (docs/signing.md, Endorsed rotation). */
export type KeyTrustReason =
  'UNENDORSED_KEY' | 'ENDORSER_UNKNOWN' | 'ENDORSER_REVOKED' | 'ENDORSEMENT_LOOP' | 'INVALID_ENDORSEMENT' | 'KEY_REVOKED';

export type CheckResult =
  | {
      ok: true;
      status: 'active' | 'grace';
      license: LicensePayload;
      /** Which stored document the answer comes from. */
      source: 'license_file' | 'activation';
      expiresAt: Date | null;
      graceEndsAt: Date | null;
      fileExpiresAt: Date | null;
    }
  | { ok: false; reason: CheckReason; message: string; license?: LicensePayload };
