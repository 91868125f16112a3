import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { SignedEnvelopeDto } from './client-responses.dto';
import { IsString } from 'class-validator';
import { MAX_ACTIVATION_REQUEST_LENGTH } from '../license-file';
import { MaxChars, MinChars } from '../../common/validation/validators';

/** `POST /api/v1/license-file` and the offline activation answer (docs/client-api.md, Licence file). */
export class LicenseFileResponseDto {
  @ApiProperty({
    example: '-----BEGIN LICENSE FILE-----\neyJsaWNlbnNlIjp7...\n-----END LICENSE FILE-----\n',
    description:
      'Armored base64 (64-character lines) of the UTF-8 JSON {"license": {...payload, file_issued_at, file_expires_at}, "signature": "RSA-SHA256:..."}; the signature is computed exactly as for activation',
  })
  license_file: string;

  @ApiProperty({ format: 'date-time', example: '2026-02-01T09:30:00.000Z', description: 'file_issued_at + license_file_ttl_days' })
  file_expires_at: string;

  @ApiPropertyOptional({
    type: SignedEnvelopeDto,
    description:
      'Only when the request said `envelope: true`: the file is version 2 and carries this same envelope beside `license` and `signature`',
  })
  envelope?: SignedEnvelopeDto;
}

/** `POST /api/v1/admin/offline-activations`: the text an air-gapped machine produced. */
export class OfflineActivationRequestDto {
  @ApiProperty({
    minLength: 1,
    maxLength: MAX_ACTIVATION_REQUEST_LENGTH,
    example: '-----BEGIN ACTIVATION REQUEST-----\neyJsaWNlbnNlX2tleSI6...\n-----END ACTIVATION REQUEST-----\n',
    description: 'base64 of the JSON body of /activate between -----BEGIN ACTIVATION REQUEST----- and -----END ACTIVATION REQUEST-----',
  })
  @IsString()
  @MinChars(1)
  @MaxChars(MAX_ACTIVATION_REQUEST_LENGTH)
  request: string;
}
