import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, IsString, Matches } from 'class-validator';
import { IsStorableText, MaxChars } from '../../common/validation/validators';
import { IsOptionalNotNull, MACHINE_FINGERPRINT_PATTERN, normalizeFingerprint, NOT_BLANK } from './license-fields';

export class RevokeLicenseDto {
  @ApiProperty({ example: 'Customer stopped paying', minLength: 1 })
  @IsString()
  @MaxChars(500)
  @Matches(NOT_BLANK, { message: 'reason must not be empty' })
  @IsStorableText()
  reason: string;
}

export class ReleaseSeatsDto {
  @ApiPropertyOptional({
    example: 'sha256:' + 'ab'.repeat(32),
    pattern: MACHINE_FINGERPRINT_PATTERN.source,
    description: 'release this seat only; omitted: release every seat',
  })
  @IsOptionalNotNull()
  @Transform(normalizeFingerprint)
  @IsString()
  @Matches(MACHINE_FINGERPRINT_PATTERN, { message: 'machine_fingerprint must be sha256: followed by 64 hex digits' })
  machine_fingerprint?: string;

  @ApiPropertyOptional({ example: 'Machine was stolen', nullable: true, type: String })
  @IsOptional()
  @IsString()
  @MaxChars(500)
  @IsStorableText()
  reason?: string | null;
}

export class ReleaseResultDto {
  @ApiProperty({ example: '1 seat released' }) message: string;
  @ApiProperty({ type: 'integer', minimum: 1, example: 1, description: 'number of seats released' }) released: number;
}

export class CreatedLicenseDto {
  @ApiProperty({ type: 'integer', example: 42 }) id: number;
  @ApiProperty({ example: 'POS-7K3QM-X9D2R-TB4WN-H8C5Z' }) license_key: string;
  @ApiProperty({ example: 'License created' }) message: string;
}
