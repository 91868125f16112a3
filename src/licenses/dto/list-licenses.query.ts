import { ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { IsIn, IsIP, IsOptional, IsString } from 'class-validator';
import { EXPORT_FORMATS, type ExportFormat } from '../../common/http/export';
import { KeysetPageQueryDto } from '../../common/http/page-query.dto';
import { IsStorableText, MaxChars, MinChars } from '../../common/validation/validators';
import { LICENSE_STATUSES, type LicenseStatus } from '../license-status';
import { LICENSE_TYPES, type LicenseType } from '../license-type';
import { STORE_NAMES } from '../store-licenses/store-names';

/** GET /licenses filters (docs/licences.md, Reading and listing); every one optional and combined with AND. */
export class ListLicensesQueryDto extends KeysetPageQueryDto {
  @ApiPropertyOptional({ example: 'POS_RETAIL', description: 'product code' })
  @IsOptional()
  @IsString()
  @MaxChars(32)
  product?: string;

  @ApiPropertyOptional({ enum: LICENSE_STATUSES, example: 'active' })
  @IsOptional()
  @IsIn(LICENSE_STATUSES)
  status?: LicenseStatus;

  @ApiPropertyOptional({ enum: LICENSE_TYPES, example: 'MONTHLY' })
  @IsOptional()
  @IsIn(LICENSE_TYPES)
  license_type?: LicenseType;

  @ApiPropertyOptional({
    example: 'kod mike',
    description:
      'literal substring (% and _ are not wildcards), case- and accent-insensitive, of the customer name, e-mail or PIB, or the licence key with or without dashes',
  })
  @IsOptional()
  @IsString()
  @MinChars(1)
  @MaxChars(200)
  @IsStorableText()
  q?: string;

  @ApiPropertyOptional({ enum: STORE_NAMES, example: 'stripe', description: 'only licences this store made (docs/stores.md)' })
  @IsOptional()
  @IsIn(STORE_NAMES)
  store?: string;

  @ApiPropertyOptional({ example: 'sub_1Q2w3E4r5T6y7U8i', description: 'the licence of this store subscription' })
  @IsOptional()
  @IsString()
  @MinChars(1)
  @MaxChars(255)
  @IsStorableText()
  subscription_id?: string;

  @ApiPropertyOptional({
    example: '203.0.113.7',
    description: 'only self-service trials started from this IP address (docs/licences.md, Trials)',
  })
  @IsOptional()
  @IsIP()
  trial_ip?: string;
}

/** GET /licenses/export: the list's filters (no paging: every match) and the format. */
export class ExportLicensesQueryDto extends OmitType(ListLicensesQueryDto, ['limit', 'offset', 'after'] as const) {
  @ApiPropertyOptional({ enum: EXPORT_FORMATS, default: 'csv' })
  @IsOptional()
  @IsIn(EXPORT_FORMATS)
  format: ExportFormat = 'csv';
}
