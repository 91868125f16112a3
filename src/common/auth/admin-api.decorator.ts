import { applyDecorators, UseGuards, UsePipes } from '@nestjs/common';
import { ApiBadRequestResponse, ApiSecurity, ApiServiceUnavailableResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ErrorResponseDto } from '../errors/error-response.dto';
import { RateLimit } from '../http/throttling';
import { strictValidationPipe } from '../http/validation.pipe';
import { ApiKeyGuard } from './api-key.guard';

export const API_KEY_SCHEME = 'api-key';

/**
 * Marks a controller as admin API: the per-IP 'admin' rate limit (checked first, so key guessing
 * counts too), the X-API-Key guard, the Swagger security scheme and the strict validation pipe
 * (unknown fields rejected) in one decorator, so they cannot drift.
 */
export function AdminApi(): ClassDecorator {
  return applyDecorators(
    RateLimit('admin'),
    UseGuards(ApiKeyGuard),
    UsePipes(strictValidationPipe),
    ApiSecurity(API_KEY_SCHEME),
    ApiUnauthorizedResponse({ description: 'Missing or wrong X-API-Key', type: ErrorResponseDto }),
    ApiBadRequestResponse({ description: 'VALIDATION_ERROR', type: ErrorResponseDto }),
    ApiServiceUnavailableResponse({ description: 'Database unavailable', type: ErrorResponseDto }),
  );
}
