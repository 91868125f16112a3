import { ApiProperty, ApiPropertyOptional, OmitType, PartialType } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayUnique, IsArray, IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, ValidateIf } from 'class-validator';
import { FEATURE_NAME, FeatureListInput, IsStorableText, LimitsInput, MaxChars, MinChars } from '../../common/validation/validators';
import { IsOptionalNotNull } from '../../licenses/dto/license-fields';
import { POLICY_INPUT_SCHEMA } from '../../common/seat-policy/seat-policy.dto';
import { IsPolicy, type PolicyOverrides } from '../../common/seat-policy/license-policy';
import { LICENSE_TYPES, type LicenseType } from '../../licenses/license-type';
import { ON_END_ACTIONS, type OnEndAction, STORE_NAMES, type StoreName } from '../../licenses/store-licenses/store-names';
import type { StorePlan } from '../store-plan.entity';
import { apiFields, apiObject, apiTimes } from '../../common/http/api-fields';

/** POST /admin/store-plans: a store's price and the licence it sells (docs/stores.md, Plans). */
export class CreateStorePlanDto {
  @ApiProperty({ enum: STORE_NAMES, example: 'stripe' })
  @IsIn(STORE_NAMES)
  store: StoreName;

  @ApiProperty({
    example: 'price_1Q2w3E4r5T6y7U8i',
    minLength: 1,
    maxLength: 255,
    description: 'a Stripe price, a Paddle price or a Lemon Squeezy variant; unique per store',
  })
  @IsString()
  @MinChars(1)
  @MaxChars(255)
  @IsStorableText()
  price_id: string;

  @ApiProperty({ example: 'POS_RETAIL', minLength: 1, description: 'code of an active product' })
  @IsString()
  @MinChars(1)
  @MaxChars(32)
  product_code: string;

  @ApiProperty({
    enum: LICENSE_TYPES,
    example: 'MONTHLY',
    description: 'a subscription expires at the paid period end; else per license_type',
  })
  @IsIn(LICENSE_TYPES)
  license_type: LicenseType;

  @LimitsInput({
    example: { max_installations: 2 },
    description: "the licences' own limits; a quantity above 1 multiplies max_installations",
  })
  limits?: Record<string, number>;

  @FeatureListInput({ example: ['REPORTS'], description: "from the product's available_features; omitted: all of them" })
  features?: string[];

  @ApiPropertyOptional({
    ...POLICY_INPUT_SCHEMA,
    example: { heartbeat_timeout_seconds: 600 },
    description: "the licences' seat-policy overrides",
  })
  @IsOptionalNotNull()
  @IsPolicy(false)
  policy?: PolicyOverrides;

  @ApiPropertyOptional({ type: 'integer', maximum: 365, example: 7, description: 'default 7' })
  @IsOptionalNotNull()
  @IsInt()
  @Min(0)
  @Max(365)
  grace_days?: number;

  @ApiPropertyOptional({
    enum: ON_END_ACTIONS,
    example: 'expire',
    description:
      'when the subscription ends: expire at the end time (grace applies), suspend, or revoke. Required, except for a PERPETUAL plan (a one-time sale has no subscription to end; default expire)',
  })
  // docs/stores.md, Plans: a PERPETUAL plan may leave it out.
  @ValidateIf((plan: CreateStorePlanDto) => plan.license_type !== 'PERPETUAL' || plan.on_end !== undefined)
  @IsIn(ON_END_ACTIONS)
  on_end?: OnEndAction;
}

/** PUT /admin/store-plans/{id}: any of the creation fields; `features: null` goes back to all of the product's. */
export class UpdateStorePlanDto extends PartialType(OmitType(CreateStorePlanDto, ['features'] as const)) {
  @ApiPropertyOptional({
    type: [String],
    nullable: true,
    example: ['REPORTS'],
    description: "from the product's available_features; null: all of them",
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(64)
  @ArrayUnique()
  @IsString({ each: true })
  @Matches(FEATURE_NAME, { each: true, message: 'each feature must be UPPER_SNAKE_CASE' })
  features?: string[] | null;
}

export class StorePlanDto {
  @ApiProperty({ type: 'integer', example: 3 }) id: number;
  @ApiProperty({ enum: STORE_NAMES, example: 'stripe' }) store: StoreName;
  @ApiProperty({ example: 'price_1Q2w3E4r5T6y7U8i' }) price_id: string;
  @ApiProperty({ example: 'POS_RETAIL' }) product_code: string;
  @ApiProperty({ enum: LICENSE_TYPES, example: 'MONTHLY' }) license_type: LicenseType;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' }, example: { max_installations: 2 } }) limits: Record<
    string,
    number
  >;
  @ApiProperty({ type: [String], nullable: true, example: null, description: 'null: every feature the product offers' }) features:
    string[] | null;
  @ApiProperty({ ...POLICY_INPUT_SCHEMA, example: {} }) policy: PolicyOverrides;
  @ApiProperty({ type: 'integer', example: 7 }) grace_days: number;
  @ApiProperty({ enum: ON_END_ACTIONS, example: 'expire' }) on_end: OnEndAction;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;

  static from(plan: StorePlan): StorePlanDto {
    return apiObject(
      apiFields(plan, 'id', 'store', 'priceId'),
      { product_code: plan.product?.code ?? '' },
      apiFields(plan, 'licenseType', 'limits', 'features', 'policy', 'graceDays', 'onEnd'),
      apiTimes(plan, 'createdAt', 'updatedAt'),
    );
  }
}
