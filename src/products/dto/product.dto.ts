import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsString, Matches, registerDecorator, ValidateIf } from 'class-validator';
import {
  FEATURE_NAME,
  IsLimitsMap,
  IsOptionalNotNull,
  IsStorableText,
  MaxChars,
  MinChars,
  FeatureListInput,
} from '../../common/validation/validators';
import { IsPolicy, mergePolicy } from '../../common/seat-policy/license-policy';
import { POLICY_INPUT_SCHEMA, SeatPolicyDto } from '../../common/seat-policy/seat-policy.dto';
import { type Product, type ProductTrial, UPDATE_POLICIES, type UpdatePolicy } from '../product.entity';
import { apiFields, apiObject, apiTimes } from '../../common/http/api-fields';

const TRIAL_SCHEMA = {
  type: 'object' as const,
  additionalProperties: false,
  required: ['days'],
  properties: {
    days: { type: 'integer' as const, minimum: 1, maximum: 90, description: 'the trial licence expires after this many days (grace 0)' },
    max_installations: { type: 'integer' as const, minimum: 1, maximum: 100, description: 'seats of a trial licence (default 1)' },
    features: {
      type: 'array' as const,
      items: { type: 'string' as const },
      description: "the trial's features (default: all of the product's)",
    },
  },
  example: { days: 14 },
};

/** Why `value` is not trial settings, or undefined when it is. */
export function trialProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be an object or null';
  const t = value as Record<string, unknown>;
  const unknown = Object.keys(t).find((k) => !['days', 'max_installations', 'features'].includes(k));
  if (unknown) return `has an unknown key "${unknown}" (allowed: days, max_installations, features)`;
  const int = (v: unknown, min: number, max: number) => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
  if (!int(t.days, 1, 90)) return '.days must be an integer from 1 to 90';
  if (t.max_installations !== undefined && !int(t.max_installations, 1, 100)) return '.max_installations must be an integer from 1 to 100';
  if (t.features !== undefined) {
    const f = t.features;
    if (!Array.isArray(f) || f.length > 64 || f.some((x) => typeof x !== 'string' || !FEATURE_NAME.test(x)) || new Set(f).size !== f.length)
      return '.features must be unique UPPER_SNAKE_CASE feature names';
  }
  return undefined;
}

function IsTrial(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isTrial',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => trialProblem(value) === undefined,
        defaultMessage: (args) => {
          const problem = trialProblem(args?.value) ?? '';
          return problem.startsWith('.') ? `${args?.property}${problem}` : `${args?.property} ${problem}`;
        },
      },
    });
}

export class CreateProductDto {
  @ApiProperty({ example: 'POS_RETAIL' })
  @IsString()
  @Matches(/^[A-Z][A-Z0-9_]{1,31}$/, { message: 'code must match ^[A-Z][A-Z0-9_]{1,31}$' })
  code: string;

  @ApiProperty({ example: 'Retail Point of Sale' })
  @IsString()
  @MinChars(1)
  @MaxChars(200)
  @IsStorableText()
  name: string;

  @ApiProperty({ example: 'POS' })
  @IsString()
  @Matches(/^[A-Z0-9]{2,8}$/, { message: 'key_prefix must match ^[A-Z0-9]{2,8}$' })
  key_prefix: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'integer' }, example: { max_installations: 1 } })
  @IsOptionalNotNull()
  @IsLimitsMap()
  default_limits?: Record<string, number>;

  @ApiPropertyOptional({
    ...POLICY_INPUT_SCHEMA,
    example: { heartbeat_timeout_seconds: 600 },
    description:
      'seat policy of its licences unless a licence overrides a key; on PUT, key by key (an omitted key stays). Unset keys: heartbeat_timeout_seconds null, max_deactivations_per_30_days null, license_file_ttl_days 30',
  })
  @IsOptionalNotNull()
  @IsPolicy(false)
  default_policy?: Record<string, number | string | null>;

  @FeatureListInput({ example: ['REPORTS', 'MULTI_OPERATOR'] })
  available_features?: string[];

  @ApiPropertyOptional({
    ...TRIAL_SCHEMA,
    nullable: true,
    description: 'self-service trials through POST /api/v1/trials (docs/licences.md, Trials); null: none (the default)',
  })
  @ValidateIf((body: { trial?: unknown }) => body.trial !== undefined && body.trial !== null)
  @IsTrial()
  trial?: ProductTrial | null;

  @ApiPropertyOptional({
    enum: UPDATE_POLICIES,
    description:
      'which releases a licence may download (docs/releases.md, Entitlement): current (default) only while usable; perpetual_fallback also, once expired, every release published before its expiry',
  })
  @IsOptionalNotNull()
  @IsIn(UPDATE_POLICIES)
  update_policy?: UpdatePolicy;

  // No `default` in the schema: generators would make the field required, and a partial PUT would overwrite it.
  @ApiPropertyOptional({ type: Boolean, description: 'default true; false hides the product from new licences' })
  @IsOptionalNotNull()
  @IsBoolean()
  active?: boolean;
}

// Every product column is NOT NULL: null is refused, not skipped (it used to reach the database as a 500).
export class UpdateProductDto extends PartialType(CreateProductDto, { skipNullProperties: false }) {}

export class ProductDto {
  @ApiProperty({ type: 'integer', example: 1 }) id: number;
  @ApiProperty({ example: 'POS_RETAIL' }) code: string;
  @ApiProperty({ example: 'Retail Point of Sale' }) name: string;
  @ApiProperty({ example: 'POS' }) key_prefix: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' }, example: { max_installations: 1 } })
  default_limits: Record<string, number>;
  @ApiProperty({ type: SeatPolicyDto, description: 'seat policy of its licences, every key (unset keys at their defaults)' })
  default_policy: SeatPolicyDto;
  @ApiProperty({ type: [String], example: ['REPORTS'] }) available_features: string[];
  @ApiProperty() active: boolean;
  @ApiProperty({ enum: UPDATE_POLICIES, description: 'docs/releases.md, Entitlement' }) update_policy: UpdatePolicy;
  @ApiProperty({ ...TRIAL_SCHEMA, nullable: true, description: 'self-service trial settings; null: no trials' })
  trial: ProductTrial | null;
  @ApiProperty({ format: 'date-time', example: '2026-01-01T00:00:00.000Z' }) created_at: string;
  @ApiProperty({ format: 'date-time', example: '2026-01-01T00:00:00.000Z' }) updated_at: string;

  static from(p: Product): ProductDto {
    return apiObject(
      apiFields(p, 'id', 'code', 'name', 'keyPrefix', 'defaultLimits'),
      { default_policy: mergePolicy(p.defaultPolicy, {}) },
      apiFields(p, 'availableFeatures', 'active', 'updatePolicy'),
      { trial: p.trial ?? null },
      apiTimes(p, 'createdAt', 'updatedAt'),
    );
  }
}
