import { ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { EXPORT_FORMATS, type ExportFormat } from '../../common/http/export';
import { KeysetPageQueryDto, toQueryInteger } from '../../common/http/page-query.dto';
import { IsIsoTimestamp } from '../../common/validation/iso-timestamp';
import { MaxChars, MinChars } from '../../common/validation/validators';
import { ACTOR_MAX_LENGTH } from '../../common/event-vocabulary';
import { ACTOR_TYPES, AUDIT_ACTIONS, type ActorType, type AuditAction } from '../audit-entry.entity';

/** Text without control characters (line breaks, NUL, escapes): what an actor or a product code never holds. */
const NO_CONTROL_CHARACTERS = /^\P{Cc}*$/u;

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

  @ApiPropertyOptional({
    example: 'POS_RETAIL',
    maxLength: 32,
    description:
      "entries of the product with this code: its licences' and its own; a code no product has, or one outside the credential's products, matches nothing",
  })
  @IsOptional()
  @IsString()
  @MinChars(1)
  @MaxChars(32)
  @Matches(NO_CONTROL_CHARACTERS, { message: 'product must not contain control characters' })
  product?: string;

  @ApiPropertyOptional({
    example: 'token:billing',
    maxLength: ACTOR_MAX_LENGTH,
    description:
      "entries of exactly this actor: `staff:<username>`, `key:<id>`, `token:<name>`, `store:<name>`, a customer's e-mail address (portal) or a client's IP",
  })
  @IsOptional()
  @IsString()
  @MinChars(1)
  @MaxChars(ACTOR_MAX_LENGTH)
  @Matches(NO_CONTROL_CHARACTERS, { message: 'actor must not contain control characters' })
  actor?: string;

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
