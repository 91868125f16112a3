import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ErrorCode } from './error-codes';

export class ErrorDetailDto {
  @ApiProperty({ enum: Object.values(ErrorCode), example: 'VALIDATION_ERROR' }) code: string;
  @ApiProperty({ example: 'Request validation failed' }) message: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      'Depends on the code: `fields` for VALIDATION_ERROR, `activated_on`/`activated_at` for ALREADY_ACTIVATED, `retry_after_seconds` for RATE_LIMITED, `required_scope` for FORBIDDEN',
    example: { fields: [{ field: 'customer_email', message: 'customer_email must be an email' }] },
  })
  details?: Record<string, unknown>;
}

/** The one error body of every JSON route (docs/errors.md, Body). */
export class ErrorResponseDto {
  @ApiProperty({ type: ErrorDetailDto }) error: ErrorDetailDto;
}
