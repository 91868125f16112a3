import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsEmail, IsInt, IsOptional, IsString, Matches, Max, Min, ValidateIf } from 'class-validator';
import { IsStorableText, MaxChars, MinChars } from '../../common/validation/validators';
import { MACHINE_FINGERPRINT_PATTERN, normalizeFingerprint } from '../../licenses/dto/license-fields';
import { normalizeLicenseKey } from '../../licenses/license-key';

// Only strings are normalised: any other JSON type reaches the validators unchanged and fails there.
const normalizedKey = ({ value }: { value: unknown }) => (typeof value === 'string' ? normalizeLicenseKey(value) : value);
const upperCasedTrimmed = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim().toUpperCase() : value);

/**
 * A text the client may leave out or send as null: the schema and the string check. Listed bottom-up, as the same
 * decorators stacked on the property apply; the property's own bounds stand below it.
 */
const NullableText = (doc: { example: string; description?: string }) =>
  applyDecorators(IsString(), IsOptional(), ApiPropertyOptional({ type: String, nullable: true, ...doc }));

/** An optional text the machine reports about itself (`os`, `app_version`): at most `max` characters, storable. */
const ReportedText = (max: number, example: string) => applyDecorators(NullableText({ example }), MaxChars(max), IsStorableText());

/**
 * The machine's fingerprint, `sha256:` and 64 hex digits (upper case lower-cased). Listed bottom-up, as the same
 * decorators stacked on the property apply.
 */
const MachineFingerprint = () =>
  applyDecorators(
    Matches(MACHINE_FINGERPRINT_PATTERN, { message: 'machine_fingerprint must be "sha256:" followed by 64 hex digits' }),
    IsString(),
    Transform(normalizeFingerprint),
    ApiProperty({
      example: 'sha256:' + 'a'.repeat(64),
      pattern: MACHINE_FINGERPRINT_PATTERN.source,
      description: 'Upper-case hex is accepted and lower-cased',
    }),
  );

/** `{license_key, machine_fingerprint}`: the body of deactivate and validate. Unknown fields are ignored. */
export class SeatRequestDto {
  @ApiProperty({ example: 'POS-7K2QF-9XWMB-R4TZN-H8CVD', description: 'Case-insensitive; surrounding whitespace ignored' })
  @Transform(normalizedKey)
  @IsString()
  @MinChars(1)
  @MaxChars(64)
  license_key: string;

  @MachineFingerprint()
  machine_fingerprint: string;
}

/**
 * `envelope: true` asks for the signed envelope beside the legacy fields (docs/signing.md, Envelopes). Opt-in, so that an
 * answer to a client that does not ask stays exactly as it was. null or any other value is a 400.
 */
function EnvelopeOption(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: Boolean,
      example: true,
      description:
        'Absent or false: the answer as before. true: the answer also carries `envelope` {payload, alg, key_id, signature} (a licence file is then version 2)',
    }),
    ValidateIf((body: { envelope?: unknown }) => body.envelope !== undefined),
    IsBoolean({ message: 'envelope must be true or false' }),
  );
}

/** The licence-file body: a seat, and whether the file is version 2 (with an envelope). */
export class LicenseFileRequestDto extends SeatRequestDto {
  @EnvelopeOption()
  envelope?: boolean;
}

export const NONCE_PATTERN = /^[A-Za-z0-9_-]{16,128}$/;

/** The validate body: a seat plus an optional nonce that asks for a signed answer (docs/client-api.md, Signed validation). */
export class ValidateRequestDto extends SeatRequestDto {
  @ApiPropertyOptional({
    example: 'm3WqJx7Yc1tP0aZr9LkV2eHs',
    pattern: NONCE_PATTERN.source,
    minLength: 16,
    maxLength: 128,
    description:
      'Fresh random value per call (16-128 of A-Z a-z 0-9 _ -). Given: the answer is signed and echoes it, so a replayed answer fails the check. null is refused.',
  })
  // Only an absent nonce means "unsigned": null or any other value is a 400, never silently an unsigned answer.
  @ValidateIf((body: { nonce?: unknown }) => body.nonce !== undefined)
  @IsString()
  @Matches(NONCE_PATTERN, { message: 'nonce must be 16-128 characters of A-Z a-z 0-9 _ -' })
  nonce?: string;

  /** With a nonce: the signed answer also carries its envelope. */
  @EnvelopeOption()
  envelope?: boolean;
}

/** The activation request, with the optional `product` code (docs/client-api.md, Activate). */
export class ActivateRequestDto extends SeatRequestDto {
  @ApiProperty({ example: 'till-01' })
  @IsString()
  @MinChars(1)
  @MaxChars(255)
  @IsStorableText()
  hostname: string;

  @ReportedText(100, 'Windows 11') os?: string | null;
  @ReportedText(50, '4.2.0') app_version?: string | null;

  @Transform(upperCasedTrimmed)
  @NullableText({
    example: 'POS_RETAIL',
    description: 'Product code of the client application; PRODUCT_MISMATCH when the licence is for another product',
  })
  @MinChars(1)
  @MaxChars(32)
  product?: string | null;

  @EnvelopeOption()
  envelope?: boolean;
}

export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9_-]{8,128}$/;
export const MAX_USAGE_INCREMENT = 1_000_000;

/** The usage body (docs/client-api.md, Usage): a seat, how many uses, an optional idempotency key and nonce. */
export class UsageRequestDto extends ValidateRequestDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_USAGE_INCREMENT, default: 1, example: 1 })
  // Absent means 1; null or any other type is a 400 ("1" is not an integer).
  @ValidateIf((body: { increment?: unknown }) => body.increment !== undefined)
  @IsInt()
  @Min(1)
  @Max(MAX_USAGE_INCREMENT)
  increment?: number;

  @ApiPropertyOptional({
    pattern: IDEMPOTENCY_KEY_PATTERN.source,
    minLength: 8,
    maxLength: 128,
    example: 'export-2026-03-01-0001',
    description:
      'Same key and body within 24 hours: the first answer again, nothing counted twice; another body: 409 IDEMPOTENCY_KEY_REUSED',
  })
  @ValidateIf((body: { idempotency_key?: unknown }) => body.idempotency_key !== undefined)
  @IsString()
  @Matches(IDEMPOTENCY_KEY_PATTERN, { message: 'idempotency_key must be 8-128 characters of A-Z a-z 0-9 _ -' })
  idempotency_key?: string;
}

/** The trial body (docs/client-api.md, Trials): the product code and this machine; unknown fields are ignored. */
export class TrialRequestDto {
  @ApiProperty({ example: 'POS_RETAIL', description: 'Product code (case-insensitive)' })
  @Transform(upperCasedTrimmed)
  @IsString()
  @MinChars(1)
  @MaxChars(32)
  product: string;

  @MachineFingerprint()
  machine_fingerprint: string;

  @NullableText({ example: 'till-01', description: 'the trial licence\'s customer name (else "Trial")' })
  @MinChars(1)
  @MaxChars(255)
  @IsStorableText()
  hostname?: string | null;

  @ReportedText(100, 'Windows 11') os?: string | null;
  @ReportedText(50, '4.2.0') app_version?: string | null;

  @NullableText({ example: 'it@acme.example', description: 'a licence issued later for this e-mail links this trial' })
  @MaxChars(254)
  @IsEmail({}, { message: 'customer_email must be an email address' })
  customer_email?: string | null;

  @EnvelopeOption()
  envelope?: boolean;
}
