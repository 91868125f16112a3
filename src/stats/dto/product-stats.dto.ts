import { ApiProperty } from '@nestjs/swagger';

export class LicenseCountsDto {
  @ApiProperty({ type: 'integer', minimum: 0, example: 12 }) total: number;
  @ApiProperty({ type: 'integer', minimum: 0, example: 8 }) active: number;
  @ApiProperty({ type: 'integer', minimum: 0, example: 1 }) grace: number;
  @ApiProperty({ type: 'integer', minimum: 0, example: 1 }) expired: number;
  @ApiProperty({ type: 'integer', minimum: 0, example: 1 }) revoked: number;
  @ApiProperty({ type: 'integer', minimum: 0, example: 1 }) suspended: number;
}

export class ActivationCountsDto {
  @ApiProperty({ type: 'integer', minimum: 0, example: 9, description: 'seats bound now' }) current: number;
  @ApiProperty({ type: 'integer', minimum: 0, example: 4, description: 'bindings made in the last 30 days (released or not)' })
  last_30_days: number;
  @ApiProperty({
    type: 'integer',
    example: 2,
    description: 'seats released in the last 30 days because their machine stopped sending heartbeats',
  })
  released_by_heartbeat_last_30_days: number;
}

export class TrialCountsDto {
  @ApiProperty({ type: 'integer', minimum: 0, example: 40, description: 'self-service trials started (POST /api/v1/trials)' })
  started: number;
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    example: 6,
    description: 'of them, converted: a later licence names the trial as converted_from',
  })
  converted: number;
}

/** Statistics of one product (docs/licences.md, Statistics), correct at the moment of the request. */
export class ProductStatsDto {
  @ApiProperty({ example: 'POS_RETAIL' }) product_code: string;
  @ApiProperty({ example: 'Retail Point of Sale' }) product_name: string;
  @ApiProperty({ type: LicenseCountsDto, description: 'by derived status; total is their sum' }) licenses: LicenseCountsDto;
  @ApiProperty({ type: ActivationCountsDto }) activations: ActivationCountsDto;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer', minimum: 0 },
    example: { TRIAL: 2, MONTHLY: 6, QUARTERLY: 0, YEARLY: 3, PERPETUAL: 1 },
    description: 'licences per license_type, every type listed',
  })
  by_type: Record<string, number>;
  @ApiProperty({ type: TrialCountsDto }) trials: TrialCountsDto;
}
