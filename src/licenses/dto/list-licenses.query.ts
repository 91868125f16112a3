import { ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { EXPORT_FORMATS, type ExportFormat } from '../../common/http/export';
import { PageQueryDto } from '../../common/http/page-query.dto';
import { IsStorableText } from '../../common/validation/validators';
import { LICENSE_STATUSES, type LicenseStatus } from '../license-status';
import { LICENSE_TYPES, type LicenseType } from '../license-type';

/** GET /licenses filters (CONTRACT 5); every one optional and combined with AND. */
export class ListLicensesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ example: 'POS_RETAIL', description: 'product code' })
  @IsOptional()
  @IsString()
  @MaxLength(32)
  product?: string;

  @ApiPropertyOptional({ enum: LICENSE_STATUSES, example: 'active' })
  @IsOptional()
  @IsIn(LICENSE_STATUSES)
  status?: LicenseStatus;

  @ApiPropertyOptional({ enum: LICENSE_TYPES, example: 'MONTHLY' })
  @IsOptional()
  @IsIn(LICENSE_TYPES)
  license_type?: LicenseType;

  @ApiPropertyOptional({ example: 'kod mike', description: 'case-insensitive literal substring of customer name, e-mail or licence key' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  @IsStorableText()
  q?: string;
}

/** GET /licenses/export: the list's filters (no paging: every match) and the format. */
export class ExportLicensesQueryDto extends OmitType(ListLicensesQueryDto, ['limit', 'offset'] as const) {
  @ApiPropertyOptional({ enum: EXPORT_FORMATS, default: 'csv' })
  @IsOptional()
  @IsIn(EXPORT_FORMATS)
  format: ExportFormat = 'csv';
}
