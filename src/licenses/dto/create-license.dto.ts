import { ApiProperty, ApiPropertyOptional, OmitType, PartialType } from '@nestjs/swagger';
import { IsBoolean, IsEmail, IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { IsIsoTimestamp } from '../../common/validation/iso-timestamp';
import { FeatureListInput, IsStorableText, LimitsInput, MaxChars } from '../../common/validation/validators';
import { IsPolicy } from '../../common/seat-policy/license-policy';
import { LICENSE_TYPES, type LicenseType } from '../license-type';
import { POLICY_INPUT_SCHEMA } from '../../common/seat-policy/seat-policy.dto';
import { IsOptionalNotNull, IsPib, NOT_BLANK } from './license-fields';

export const MAX_GRACE_DAYS = 365;
export const DEFAULT_GRACE_DAYS = 7;

/** Licence creation input (docs/licences.md, Creating). Also the service's input type for the dashboard. */
export class CreateLicenseDto {
  @ApiProperty({ example: 'POS_RETAIL', description: 'code of an active product' })
  @IsString()
  @MaxChars(32)
  product_code: string;

  @ApiProperty({
    enum: LICENSE_TYPES,
    example: 'MONTHLY',
    description: 'TRIAL 14 days, MONTHLY 1, QUARTERLY 3, YEARLY 12 calendar months, PERPETUAL never expires',
  })
  @IsIn(LICENSE_TYPES)
  license_type: LicenseType;

  @ApiProperty({ example: 'Prodavnica Kod Mike d.o.o.', minLength: 1, maxLength: 200 })
  @IsString()
  @MaxChars(200)
  @Matches(NOT_BLANK, { message: 'customer_name must not be empty' })
  @IsStorableText()
  customer_name: string;

  @ApiPropertyOptional({ example: 'office@example.rs', nullable: true, type: String })
  @IsOptional()
  @IsString()
  @MaxChars(254)
  @IsEmail({}, { message: 'customer_email must be an email address' })
  customer_email?: string | null;

  @ApiPropertyOptional({
    example: '101134702',
    pattern: '^[1-9]\\d{8}$',
    nullable: true,
    type: String,
    description: 'Serbian tax id with a valid check digit',
  })
  @IsOptional()
  @IsPib()
  customer_pib?: string | null;

  @LimitsInput({
    example: { max_installations: 2, max_operators: 10 },
    description: "the licence's own limits; the product's default_limits apply beneath",
  })
  limits?: Record<string, number>;

  @FeatureListInput({
    example: ['FISCAL_PRINTING', 'REPORTS'],
    description: "unique names from the product's available_features; omitted: all of them",
  })
  features?: string[];

  @ApiPropertyOptional({
    ...POLICY_INPUT_SCHEMA,
    example: { heartbeat_timeout_seconds: 600, max_deactivations_per_30_days: 3 },
    description:
      "the licence's own seat-policy overrides; the product's default_policy applies beneath. On PUT, key by key: a value sets that override, null clears it (the product's default applies), an omitted key stays",
  })
  @IsOptionalNotNull()
  @IsPolicy(true)
  policy?: Record<string, number | string | null>;

  // No `default` in the schema: generators would make the field required, and a partial PUT would overwrite it.
  // The plugin reads only literal validator arguments: MAX_GRACE_DAYS is stated here.
  @ApiPropertyOptional({ type: 'integer', maximum: MAX_GRACE_DAYS, example: 7, description: `default ${DEFAULT_GRACE_DAYS}` })
  @IsOptionalNotNull()
  @IsInt()
  @Min(0)
  @Max(MAX_GRACE_DAYS)
  grace_days?: number;

  @ApiPropertyOptional({ example: 'Ordered by phone', nullable: true, type: String })
  @IsOptional()
  @IsString()
  @MaxChars(2000)
  @IsStorableText()
  notes?: string | null;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    example: '2027-01-31T00:00:00Z',
    description: 'ISO timestamp with a zone, in the future; default computed from license_type. Not allowed for PERPETUAL',
  })
  @IsOptionalNotNull()
  @IsIsoTimestamp()
  expires_at?: string;

  @ApiPropertyOptional({
    example: true,
    description: 'true: e-mail the key to customer_email (license_issued, docs/mail.md); default false',
  })
  @IsOptionalNotNull()
  @IsBoolean()
  notify_customer?: boolean;
}

/**
 * PUT /licenses/{id}: every creation field but product_code, all optional (docs/licences.md, Changing (PUT)). `null` clears
 * customer_email, customer_pib and notes, and is the expiry of PERPETUAL licences; other fields refuse it.
 */
export class UpdateLicenseDto extends PartialType(OmitType(CreateLicenseDto, ['product_code', 'expires_at', 'notify_customer'] as const), {
  skipNullProperties: false,
}) {
  @ApiPropertyOptional({
    example: '2026-12-31T23:59:59Z',
    nullable: true,
    type: String,
    format: 'date-time',
    description: 'may be in the past (ends the licence early); null only for PERPETUAL',
  })
  @IsOptional()
  @IsIsoTimestamp()
  expires_at?: string | null;

  @ApiPropertyOptional({ example: false, description: 'false suspends, true reinstates (never for a revoked licence)' })
  @IsOptionalNotNull()
  @IsBoolean()
  active?: boolean;
}
