import { ApiProperty } from '@nestjs/swagger';
import { ACTOR_TYPES, AUDIT_ACTIONS, type ActorType, type AuditAction, type AuditEntry } from '../audit-entry.entity';

/** One audit log entry (docs/licences.md, Audit log). */
export class AuditEntryDto {
  @ApiProperty({ type: 'integer', example: 311 }) id: number;
  @ApiProperty({ format: 'date-time', example: '2026-01-31T10:00:00.000Z' }) created_at: string;
  @ApiProperty({ enum: AUDIT_ACTIONS, example: 'license.revoked' }) action: AuditAction;
  @ApiProperty({ enum: ACTOR_TYPES, example: 'admin_api' }) actor_type: ActorType;
  @ApiProperty({ nullable: true, type: String, example: 'key:3f9a1c2b', description: 'API key id, dashboard user name or client IP' })
  actor: string | null;
  @ApiProperty({ nullable: true, type: String, example: '203.0.113.7' }) ip: string | null;
  @ApiProperty({ nullable: true, type: 'integer', example: 42 }) license_id: number | null;
  @ApiProperty({ nullable: true, type: String, example: 'POS_RETAIL' }) product_code: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true, example: { reason: 'Customer stopped paying' } }) details: Record<
    string,
    unknown
  >;

  static from(e: AuditEntry): AuditEntryDto {
    // Written out, not through apiFields: a list maps a hundred of these per request (docs/performance.md, Response fields).
    return {
      id: Number(e.id),
      created_at: e.createdAt.toISOString(),
      action: e.action,
      actor_type: e.actorType,
      actor: e.actor,
      ip: e.ip,
      license_id: e.licenseId,
      product_code: e.productCode,
      details: e.details,
    };
  }
}
