import { ApiProperty } from '@nestjs/swagger';
import { POLICY_SCHEMA } from './license-policy';

/** The effective seat policy (docs/licences.md, Seat policies), every key present. */
export class SeatPolicyDto {
  @ApiProperty({ ...POLICY_SCHEMA.properties.heartbeat_timeout_seconds, type: 'integer', example: 600 })
  heartbeat_timeout_seconds: number | null;
  @ApiProperty({ ...POLICY_SCHEMA.properties.max_deactivations_per_30_days, type: 'integer', example: 3 })
  max_deactivations_per_30_days: number | null;
  @ApiProperty({ ...POLICY_SCHEMA.properties.license_file_ttl_days, type: 'integer', example: 30 })
  license_file_ttl_days: number;
  @ApiProperty({ ...POLICY_SCHEMA.properties.max_uses, type: 'integer', example: 500 })
  max_uses: number | null;
  @ApiProperty({ ...POLICY_SCHEMA.properties.uses_period, type: 'string', enum: ['none', 'month'], example: 'month' })
  uses_period: 'none' | 'month';
}

/** Swagger schema of policy input: a partial policy object, unknown keys refused. */
export const POLICY_INPUT_SCHEMA = {
  type: 'object' as const,
  additionalProperties: false,
  properties: {
    heartbeat_timeout_seconds: { ...POLICY_SCHEMA.properties.heartbeat_timeout_seconds },
    max_deactivations_per_30_days: { ...POLICY_SCHEMA.properties.max_deactivations_per_30_days },
    license_file_ttl_days: { ...POLICY_SCHEMA.properties.license_file_ttl_days },
    max_uses: { ...POLICY_SCHEMA.properties.max_uses },
    uses_period: { ...POLICY_SCHEMA.properties.uses_period, enum: [...POLICY_SCHEMA.properties.uses_period.enum] },
  },
};
