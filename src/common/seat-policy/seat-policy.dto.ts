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
}

/** Swagger schema of policy input: a partial policy object, unknown keys refused. */
export const POLICY_INPUT_SCHEMA = {
  type: 'object' as const,
  additionalProperties: false,
  properties: {
    heartbeat_timeout_seconds: { ...POLICY_SCHEMA.properties.heartbeat_timeout_seconds },
    max_deactivations_per_30_days: { ...POLICY_SCHEMA.properties.max_deactivations_per_30_days },
    license_file_ttl_days: { ...POLICY_SCHEMA.properties.license_file_ttl_days },
  },
};
