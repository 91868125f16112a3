import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { SeatPolicyDto } from '../../common/seat-policy/seat-policy.dto';
import { LICENSE_STATUSES, LicenseStatus } from '../../licenses/license-status';
import { LICENSE_TYPES, type LicenseType } from '../../licenses/license-type';
import { UsageAnswerDto } from '../../licenses/usage/usage.dto';

/** docs/signing.md, Envelopes: the exact signed bytes and their signature; a verifier decodes, verifies, then parses. */
export class SignedEnvelopeDto {
  @ApiProperty({
    pattern: '^[A-Za-z0-9_-]+$',
    example: 'eyJhY3RpdmF0ZWRfYXQiOiIyMDI2LTAzLTAxVDEwOjAwOjAwLjAwMFoifQ',
    description: 'base64url without padding of the exact signed bytes (the RFC 8785 form of what the legacy `signature` covers)',
  })
  payload: string;
  @ApiProperty({ enum: ['RS256', 'EdDSA'], example: 'RS256', description: 'RS256: RSASSA-PKCS1-v1_5 / SHA-256; EdDSA: Ed25519' })
  alg: 'RS256' | 'EdDSA';
  @ApiProperty({ example: '3f9a1c0b7d2e4f65', description: 'key_id of the signing key (GET /api/v1/public-keys)' }) key_id: string;
  @ApiProperty({
    pattern: '^[A-Za-z0-9_-]+$',
    example: 'kX9yZ3b1Qm8tV0xhcE5rR2ZfUjR6',
    description: 'the signature over the decoded payload, base64url without padding',
  })
  signature: string;
}

const ENVELOPE = {
  type: SignedEnvelopeDto,
  description: 'Only when the request said `envelope: true`: the same signature as `signature`, around the exact signed bytes',
};

export class LicenseCustomerDto {
  @ApiProperty({ example: 'Acme d.o.o.' }) name: string;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'it@acme.example',
    description: 'E-mail address; internationalized (UTF-8) addresses are allowed, so no format: email',
  })
  email: string | null;
}

/** The signed `license` object (docs/client-api.md, The signed licence); key_id names the signing key. */
export class LicensePayloadDto {
  @ApiProperty({ example: 'POS-7K2QF-9XWMB-R4TZN-H8CVD' }) license_key: string;
  @ApiProperty({ example: 'POS_RETAIL', description: 'product code' }) product: string;
  @ApiProperty({ enum: LICENSE_TYPES, example: 'YEARLY' }) license_type: LicenseType;
  @ApiProperty({ format: 'date-time', example: '2026-01-01T00:00:00.000Z', description: 'creation time of the licence' }) issued_at: string;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2027-01-01T00:00:00.000Z',
    description: 'null: never expires',
  })
  expires_at: string | null;
  @ApiProperty({ format: 'date-time', example: '2026-01-02T09:30:00.000Z' }) activated_at: string;
  @ApiProperty({ example: 'sha256:' + 'a'.repeat(64) }) machine_fingerprint: string;
  @ApiProperty({ type: 'integer', minimum: 0, example: 7 }) grace_days: number;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' }, example: { max_installations: 1, max_operators: 5 } })
  limits: Record<string, number>;
  @ApiProperty({ type: [String], example: ['FISCAL_PRINTING', 'REPORTS'] }) features: string[];
  @ApiProperty({ type: LicenseCustomerDto }) customer: LicenseCustomerDto;
  @ApiProperty({ example: '3f9a1c0b7d2e4f65', description: 'key_id of the signing key (GET /api/v1/public-keys)' }) key_id: string;
  @ApiProperty({
    type: String,
    format: 'date-time',
    example: '2026-01-02T09:30:00.412Z',
    description: 'Server time of this signature; a local clock earlier than the latest signed_at seen means the clock was set back',
  })
  signed_at: string;
  @ApiProperty({ type: SeatPolicyDto, description: "the licence's effective seat policy" }) policy: SeatPolicyDto;
}

export class SignedLicenseDto {
  @ApiProperty({ type: LicensePayloadDto }) license: LicensePayloadDto;
  @ApiProperty({
    example: 'RSA-SHA256:MIIB...',
    description:
      'RSASSA-PKCS1-v1_5 / SHA-256 over the UTF-8 bytes of the RFC 8785 canonical JSON of `license`, base64, prefixed `RSA-SHA256:`; `Ed25519:` + base64 while an Ed25519 key is active',
  })
  signature: string;
  @ApiPropertyOptional(ENVELOPE) envelope?: SignedEnvelopeDto;
}

export class DeactivateResponseDto {
  @ApiProperty({ example: 'Licence deactivated on this machine' }) message: string;
  @ApiProperty({ description: 'The licence could be activated again now (not revoked, suspended or expired)' }) can_reactivate: boolean;
}

export class ValidateResponseDto {
  @ApiProperty({ description: 'status is active or grace and this machine holds a seat' }) valid: boolean;
  @ApiProperty({ enum: LICENSE_STATUSES, example: 'active' }) status: LicenseStatus;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: '2027-01-01T00:00:00.000Z' }) expires_at: string | null;
  @ApiProperty() revoked: boolean;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2027-01-08T00:00:00.000Z',
    description: 'expires_at + grace_days',
  })
  grace_ends_at: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    enum: ['NOT_ACTIVATED', 'KEY_REVOKED', 'KEY_SUSPENDED', 'KEY_EXPIRED', null],
    example: null,
    description: 'null when valid',
  })
  code: string | null;
  @ApiProperty({ type: 'integer', nullable: true, example: 42, description: 'uses counted this period; null when not metered' })
  uses: number | null;
  @ApiProperty({ type: 'integer', nullable: true, example: 500, description: "the policy's max_uses; null when not metered" })
  max_uses: number | null;

  // Only with a nonce in the request: the signed answer (docs/client-api.md, Signed validation).
  @ApiPropertyOptional({ description: 'Only when the request carried a nonce: that nonce, echoed', example: 'm3WqJx7Yc1tP0aZr9LkV2eHs' })
  nonce?: string;
  @ApiPropertyOptional({
    description: 'Only with a nonce: the licence key checked (trimmed, upper-cased)',
    example: 'POS-7K2QF-9XWMB-R4TZN-H8CVD',
  })
  license_key?: string;
  @ApiPropertyOptional({ description: 'Only with a nonce: the machine checked (lower-case hex)', example: 'sha256:' + 'a'.repeat(64) })
  machine_fingerprint?: string;
  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    description: 'Only with a nonce: server time of the check',
    example: '2026-03-01T12:00:00.000Z',
  })
  checked_at?: string;
  @ApiPropertyOptional({ description: 'Only with a nonce: the key that signed this answer', example: '3f9a1c0b7d2e4f65' })
  key_id?: string;
  @ApiPropertyOptional({
    description:
      'Only with a nonce: `RSA-SHA256:` + base64 of RSASSA-PKCS1-v1_5 / SHA-256 over the UTF-8 bytes of the RFC 8785 canonical JSON of this response object without `signature` and `envelope` (`Ed25519:` + base64 while an Ed25519 key is active)',
    example: 'RSA-SHA256:MIIB...',
  })
  signature?: string;
  @ApiPropertyOptional(ENVELOPE) envelope?: SignedEnvelopeDto;
}

/** POST /api/v1/heartbeat (docs/client-api.md, Heartbeat). */
export class HeartbeatResponseDto {
  @ApiProperty({ description: 'status is active or grace (this machine holds a live seat, or the answer would be 400)' }) valid: boolean;
  @ApiProperty({ enum: LICENSE_STATUSES, example: 'active' }) status: LicenseStatus;
  @ApiProperty({
    type: String,
    nullable: true,
    enum: ['KEY_REVOKED', 'KEY_SUSPENDED', 'KEY_EXPIRED', null],
    example: null,
    description: 'null when valid',
  })
  code: string | null;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 600,
    description: "the licence's heartbeat timeout; null: the seat never dies (heartbeats are optional)",
  })
  heartbeat_timeout_seconds: number | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2026-01-02T09:40:00.000Z',
    description: 'the seat is released if no heartbeat arrives before this time; null: never',
  })
  next_heartbeat_before: string | null;
}

/** POST /api/v1/usage (docs/client-api.md, Usage): the count after this call; signed like validate when a nonce was sent. */
export class UsageResponseDto extends UsageAnswerDto {
  @ApiPropertyOptional({ description: 'Only when the request carried a nonce: that nonce, echoed', example: 'm3WqJx7Yc1tP0aZr9LkV2eHs' })
  nonce?: string;
  @ApiPropertyOptional({ description: 'Only with a nonce: the licence key (trimmed, upper-cased)', example: 'POS-7K2QF-9XWMB-R4TZN-H8CVD' })
  license_key?: string;
  @ApiPropertyOptional({ description: 'Only with a nonce: the machine (lower-case hex)', example: 'sha256:' + 'a'.repeat(64) })
  machine_fingerprint?: string;
  @ApiPropertyOptional({ type: String, format: 'date-time', description: 'Only with a nonce: server time of this answer' })
  checked_at?: string;
  @ApiPropertyOptional({ description: 'Only with a nonce: the key that signed this answer', example: '3f9a1c0b7d2e4f65' })
  key_id?: string;
  @ApiPropertyOptional({
    description:
      'Only with a nonce: signed exactly like a validate answer (the JCS form of this object without `signature` and `envelope`)',
    example: 'RSA-SHA256:MIIB...',
  })
  signature?: string;
  @ApiPropertyOptional(ENVELOPE) envelope?: SignedEnvelopeDto;
}
