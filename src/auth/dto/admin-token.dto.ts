import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayNotEmpty, ArrayUnique, IsArray, IsIn, IsOptional, IsString, Matches } from 'class-validator';
import { IsIsoTimestamp } from '../../common/validation/iso-timestamp';
import type { AdminToken } from '../admin-token.entity';
import { ADMIN_SCOPES, type AdminScope, SCOPE_LIST_MARKDOWN } from '../../common/auth/scopes';
import { apiFields, apiObject, apiTimes } from '../../common/http/api-fields';

const TOKEN_NAME = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,99}$/;
const PRODUCT_CODE = /^[A-Z][A-Z0-9_]{1,31}$/;

/** POST /api/v1/admin/tokens (docs/admin-api.md, Issuing and revoking). */
export class CreateAdminTokenDto {
  @ApiProperty({ example: 'webshop', pattern: TOKEN_NAME.source, description: 'unique; the audit log names the token `token:<name>`' })
  @IsString()
  @Matches(TOKEN_NAME, {
    message: 'name must be 1-100 letters, digits, spaces, dots, dashes or underscores, starting with a letter or digit',
  })
  name: string;

  @ApiProperty({
    enum: ADMIN_SCOPES,
    isArray: true,
    example: ['licenses:write'],
    description: `What the token may do:\n${SCOPE_LIST_MARKDOWN}`,
  })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayUnique()
  @IsIn(ADMIN_SCOPES, { each: true, message: `each scope must be one of ${ADMIN_SCOPES.join(', ')}` })
  scopes: AdminScope[];

  @ApiPropertyOptional({
    type: [String],
    nullable: true,
    example: ['POS_RETAIL'],
    description:
      'product codes the token is limited to (stored as the products, so a later rename does not move the limit); omitted or null: every product. Not with signing-keys:manage (400)',
  })
  @IsOptional()
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(100)
  @ArrayUnique()
  @IsString({ each: true })
  @Matches(PRODUCT_CODE, { each: true, message: 'each product must be a product code' })
  products?: string[] | null;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2027-01-01T00:00:00Z',
    description:
      'in the future; omitted or null: never. A token that expires can issue only tokens that expire no later than itself (400 otherwise)',
  })
  @IsOptional()
  @IsIsoTimestamp()
  expires_at?: string | null;
}

export const ADMIN_TOKEN_STATUSES = ['active', 'expired', 'revoked'] as const;

/** A token as GET /tokens shows it: never the token itself. */
export class AdminTokenDto {
  @ApiProperty({ type: 'integer', example: 1 }) id: number;
  @ApiProperty({ example: 'webshop' }) name: string;
  @ApiProperty({ enum: ADMIN_SCOPES, isArray: true }) scopes: AdminScope[];
  @ApiProperty({ type: [String], nullable: true, example: ['POS_RETAIL'], description: "the products' current codes; null: every product" })
  products: string[] | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) expires_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String, description: 'to the minute: written at most once a minute' })
  last_used_at: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) revoked_at: string | null;
  @ApiProperty({ enum: ADMIN_TOKEN_STATUSES }) status: (typeof ADMIN_TOKEN_STATUSES)[number];

  /** `codes`: the current code of each product id (a product limit is stored as ids). */
  static from(t: AdminToken, codes: ReadonlyMap<number, string>, now = new Date()): AdminTokenDto {
    return apiObject(
      apiFields(t, 'id', 'name', 'scopes'),
      { products: t.productIds && t.productIds.flatMap((id) => codes.get(id) ?? []) },
      apiTimes(t, 'expiresAt', 'createdAt', 'lastUsedAt', 'revokedAt'),
      { status: t.revokedAt ? 'revoked' : t.expiresAt && t.expiresAt.getTime() <= now.getTime() ? 'expired' : 'active' },
    );
  }
}

/** The 201 answer: the token is shown here once, never again. */
export class CreatedAdminTokenDto {
  @ApiProperty({ type: 'integer', example: 1 }) id: number;
  @ApiProperty({ example: 'webshop' }) name: string;
  @ApiProperty({ enum: ADMIN_SCOPES, isArray: true }) scopes: AdminScope[];
  @ApiProperty({ type: [String], nullable: true }) products: string[] | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) expires_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ example: 'lst_kJ1x0Hc3yQ...', description: 'send as X-API-Key or Authorization: Bearer; shown only here' }) token: string;
}
