import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayUnique, IsArray, IsBoolean, IsString, Matches } from 'class-validator';
import { FEATURE_NAME, IsLimitsMap, IsOptionalNotNull, IsStorableText, MaxChars, MinChars } from '../../common/validation/validators';
import { IsPolicy, mergePolicy } from '../../common/seat-policy/license-policy';
import { POLICY_INPUT_SCHEMA, SeatPolicyDto } from '../../common/seat-policy/seat-policy.dto';
import type { Product } from '../product.entity';

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

  @ApiPropertyOptional({ type: [String], example: ['REPORTS', 'MULTI_OPERATOR'] })
  @IsOptionalNotNull()
  @IsArray()
  @ArrayMaxSize(64)
  @ArrayUnique()
  @IsString({ each: true })
  @Matches(FEATURE_NAME, { each: true, message: 'each feature must be UPPER_SNAKE_CASE' })
  available_features?: string[];

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
  @ApiProperty({ format: 'date-time', example: '2026-01-01T00:00:00.000Z' }) created_at: string;
  @ApiProperty({ format: 'date-time', example: '2026-01-01T00:00:00.000Z' }) updated_at: string;

  static from(p: Product): ProductDto {
    return {
      id: p.id,
      code: p.code,
      name: p.name,
      key_prefix: p.keyPrefix,
      default_limits: p.defaultLimits,
      default_policy: mergePolicy(p.defaultPolicy, {}),
      available_features: p.availableFeatures,
      active: p.active,
      created_at: p.createdAt.toISOString(),
      updated_at: p.updatedAt.toISOString(),
    };
  }
}
