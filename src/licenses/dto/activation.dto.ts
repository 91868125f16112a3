import { ApiProperty } from '@nestjs/swagger';
import { RELEASE_REASONS, type Activation, type ReleaseReason } from '../seats/activation.entity';
import { apiFields, apiObject, apiTimes } from '../../common/http/api-fields';

/** An activation record ("seat"), docs/licences.md, Seats and machines. */
export class ActivationDto {
  @ApiProperty({ type: 'integer', example: 12 }) id: number;
  @ApiProperty({ example: 'sha256:' + 'a'.repeat(64) }) machine_fingerprint: string;
  @ApiProperty({ nullable: true, type: String, example: 'till-01' }) hostname: string | null;
  @ApiProperty({ nullable: true, type: String, example: 'Windows 11' }) os: string | null;
  @ApiProperty({ nullable: true, type: String, example: '4.2.0' }) app_version: string | null;
  @ApiProperty({ nullable: true, type: String, example: '203.0.113.7' }) ip: string | null;
  @ApiProperty({ format: 'date-time', example: '2026-01-01T00:00:00.000Z' }) activated_at: string;
  @ApiProperty({ format: 'date-time', example: '2026-01-01T00:00:00.000Z' }) last_seen_at: string;
  @ApiProperty({ nullable: true, type: String, format: 'date-time', example: null }) released_at: string | null;
  @ApiProperty({ type: String, nullable: true, enum: [...RELEASE_REASONS, null], example: null }) release_reason: ReleaseReason | null;
  @ApiProperty({ description: 'true while the seat is bound (released_at is null)' }) active: boolean;

  static from(a: Activation): ActivationDto {
    return apiObject(
      { id: Number(a.id) },
      apiFields(a, 'machineFingerprint', 'hostname', 'os', 'appVersion', 'ip'),
      apiTimes(a, 'activatedAt', 'lastSeenAt', 'releasedAt'),
      apiFields(a, 'releaseReason'),
      { active: a.releasedAt === null },
    );
  }
}
