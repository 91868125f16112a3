import { ApiProperty, type ApiPropertyOptions, IntersectionType, PickType } from '@nestjs/swagger';
import { LICENSE_STATUSES, type LicenseStatus } from '../license-status';
import { LICENSE_TYPES, type LicenseType } from '../license-type';
import { ActivationDto } from './activation.dto';
import type { PolicyOverrides } from '../../common/seat-policy/license-policy';
import { POLICY_INPUT_SCHEMA, SeatPolicyDto } from '../../common/seat-policy/seat-policy.dto';
import { STORE_NAMES } from '../store-licenses/store-names';

/** What a list row is built from: a licence's columns, its product code and the status computed in SQL. */
export interface LicenseListRow {
  id: number;
  productCode: string;
  licenseKey: string;
  licenseType: LicenseType;
  customerName: string;
  customerEmail: string | null;
  expiresAt: Date | null;
  active: boolean;
  revoked: boolean;
  status: LicenseStatus;
  createdAt: Date;
  /** Only when the page was asked for seats (the dashboard's lists). */
  seatsUsed?: number;
  seatLimit?: number;
  customerPib?: string | null;
}

export class LicenseProductDto {
  @ApiProperty({ example: 'POS_RETAIL' }) code: string;
  @ApiProperty({ example: 'Retail Point of Sale' }) name: string;
}

/** Where a store-made licence came from (docs/stores.md). */
export type LicenseStore = Readonly<{
  name: string;
  customer_id: string | null;
  subscription_id: string | null;
  order_id: string | null;
  /** A subscription that has not ended: it renews, so no expiry reminder is mailed (docs/mail.md, Stores). */
  subscription_active: boolean;
}>;

// Inline, not a $ref: OpenAPI 3.0 cannot make a referenced schema nullable.
const LICENSE_STORE_SCHEMA: ApiPropertyOptions = {
  type: 'object',
  nullable: true,
  additionalProperties: false,
  required: ['name', 'customer_id', 'subscription_id', 'order_id', 'subscription_active'],
  properties: {
    name: { type: 'string', enum: [...STORE_NAMES], example: 'stripe' },
    customer_id: { type: 'string', nullable: true, example: 'cus_Q2w3E4r5T6y7U8' },
    subscription_id: { type: 'string', nullable: true, example: 'sub_1Q2w3E4r5T6y7U8i' },
    order_id: { type: 'string', nullable: true, example: 'in_1Q2w3E4r5T6y7U8i', description: 'the first order' },
    subscription_active: {
      type: 'boolean',
      example: true,
      description: 'a subscription that has not ended (it renews; no expiry reminder is mailed); false for a one-time order',
    },
  },
};

/** One licence with everything stored, its status, merged limits and current seats (docs/licences.md, Reading and listing). */
export class LicenseDetailsDto {
  @ApiProperty({ type: 'integer', example: 42 }) id: number;
  @ApiProperty({ type: LicenseProductDto }) product: LicenseProductDto;
  @ApiProperty({ example: 'POS_RETAIL' }) product_code: string;
  @ApiProperty({ example: 'POS-7K3QM-X9D2R-TB4WN-H8C5Z' }) license_key: string;
  @ApiProperty({ enum: LICENSE_TYPES, example: 'MONTHLY' }) license_type: LicenseType;
  @ApiProperty({ example: 'Prodavnica Kod Mike d.o.o.' }) customer_name: string;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'office@example.rs',
    description: 'E-mail address; internationalized (UTF-8) addresses are allowed',
  })
  customer_email: string | null;
  @ApiProperty({ nullable: true, type: String, example: '101134702' }) customer_pib: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer' },
    example: { max_installations: 1, max_operators: 10 },
    description: "effective limits: the licence's own over the product's defaults",
  })
  limits: Record<string, number>;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer' },
    example: { max_operators: 10 },
    description: "the licence's own limits as stored",
  })
  limit_overrides: Record<string, number>;
  @ApiProperty({ type: [String], example: ['FISCAL_PRINTING', 'REPORTS'] }) features: string[];
  @ApiProperty({ type: SeatPolicyDto, description: "effective seat policy: the licence's overrides over the product's default_policy" })
  policy: SeatPolicyDto;
  @ApiProperty({
    ...POLICY_INPUT_SCHEMA,
    example: { heartbeat_timeout_seconds: 600 },
    description: "the licence's own policy overrides as stored",
  })
  policy_overrides: PolicyOverrides;
  @ApiProperty({ type: 'integer', minimum: 0, example: 7 }) grace_days: number;
  @ApiProperty({ nullable: true, type: String, example: 'Ordered by phone' }) notes: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time', example: '2026-02-28T10:00:00.000Z' }) expires_at: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'date-time',
    example: '2026-03-07T10:00:00.000Z',
    description: 'expires_at + grace_days',
  })
  grace_ends_at: string | null;
  @ApiProperty({ example: true }) active: boolean;
  @ApiProperty({ example: false }) revoked: boolean;
  @ApiProperty({ nullable: true, type: String, format: 'date-time', example: null }) revoked_at: string | null;
  @ApiProperty({ nullable: true, type: String, example: null }) revoke_reason: string | null;
  @ApiProperty({ enum: LICENSE_STATUSES, example: 'active' }) status: LicenseStatus;
  @ApiProperty({ format: 'date-time', example: '2026-01-31T10:00:00.000Z' }) created_at: string;
  @ApiProperty({ format: 'date-time', example: '2026-01-31T10:00:00.000Z' }) updated_at: string;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: null,
    description: 'id of the trial licence this one converts: the newest trial of its product for its e-mail',
  })
  converted_from: number | null;
  @ApiProperty({ type: [ActivationDto], description: 'current seats, most recent first' }) activations: ActivationDto[];
  @ApiProperty({ ...LICENSE_STORE_SCHEMA, description: 'the store that made the licence; null when staff made it' })
  store: LicenseStore | null;
}

/** How a list item words expiry and suspension (the detail states the same fields without these descriptions). */
class LicenseListState {
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'date-time',
    example: '2026-02-28T10:00:00.000Z',
    description: 'null: never expires',
  })
  expires_at: string | null;
  @ApiProperty({ example: true, description: 'false: suspended' }) active: boolean;
}

/**
 * A licence in lists (docs/licences.md, Reading and listing) plus its derived status, customer e-mail and creation time:
 * the detail's fields, in the same order, under the same schemas.
 */
export class LicenseListItemDto extends IntersectionType(
  PickType(LicenseDetailsDto, ['id', 'product_code', 'license_key', 'license_type', 'customer_name', 'customer_email'] as const),
  LicenseListState,
  PickType(LicenseDetailsDto, ['revoked', 'status', 'created_at'] as const),
) {
  static from(row: LicenseListRow): LicenseListItemDto {
    // Written out, not through apiFields: a list maps a hundred of these per request (docs/performance.md, Response fields).
    return {
      id: row.id,
      product_code: row.productCode,
      license_key: row.licenseKey,
      license_type: row.licenseType,
      customer_name: row.customerName,
      customer_email: row.customerEmail,
      expires_at: row.expiresAt ? row.expiresAt.toISOString() : null,
      active: row.active,
      revoked: row.revoked,
      status: row.status,
      created_at: row.createdAt.toISOString(),
    };
  }
}
