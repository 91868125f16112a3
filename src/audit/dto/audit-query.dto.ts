import { ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { EXPORT_FORMATS, type ExportFormat } from '../../common/http/export';
import { KeysetPageQueryDto, toQueryInteger } from '../../common/http/page-query.dto';
import { IsIsoTimestamp } from '../../common/validation/iso-timestamp';
import { ACTOR_TYPES, AUDIT_ACTIONS, type ActorType, type AuditAction } from '../audit-entry.entity';

/** GET /audit filters (docs/licences.md, Audit log), combined with AND; `from` and `to` are inclusive. */
export class AuditQueryDto extends KeysetPageQueryDto {
  @ApiPropertyOptional({ type: 'integer', example: 42 })
  @IsOptional()
  @Transform(toQueryInteger)
  @IsInt()
  @Min(1)
  @Max(2_147_483_647)
  license_id?: number;

  @ApiPropertyOptional({ enum: AUDIT_ACTIONS, example: 'license.revoked' })
  @IsOptional()
  @IsIn(AUDIT_ACTIONS)
  action?: AuditAction;

  @ApiPropertyOptional({ enum: ACTOR_TYPES, example: 'admin_api' })
  @IsOptional()
  @IsIn(ACTOR_TYPES)
  actor_type?: ActorType;

  @ApiPropertyOptional({ format: 'date-time', example: '2026-01-01T00:00:00Z', description: 'entries at or after this ISO timestamp' })
  @IsOptional()
  @IsIsoTimestamp()
  from?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    example: '2026-12-31T23:59:59Z',
    description: 'entries at or before this ISO timestamp; not before `from`',
  })
  @IsOptional()
  @IsIsoTimestamp()
  to?: string;
}

/** GET /audit/export: the list's filters (no paging: every match) and the format. */
export class ExportAuditQueryDto extends OmitType(AuditQueryDto, ['limit', 'offset', 'after'] as const) {
  @ApiPropertyOptional({ enum: EXPORT_FORMATS, default: 'csv' })
  @IsOptional()
  @IsIn(EXPORT_FORMATS)
  format: ExportFormat = 'csv';
}
