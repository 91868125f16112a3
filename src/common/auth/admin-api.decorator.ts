import { applyDecorators, UseGuards, UsePipes } from '@nestjs/common';
import { ApiBadRequestResponse, ApiSecurity, ApiServiceUnavailableResponse, ApiTooManyRequestsResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ErrorResponseDto } from '../errors/error-response.dto';
import { strictValidationPipe } from '../http/validation.pipe';
import { ApiKeyGuard } from './api-key.guard';

export const API_KEY_SCHEME = 'api-key';

/**
 * Marks a controller as admin API: the X-API-Key guard, the Swagger security scheme and
 * the strict validation pipe (unknown fields rejected) in one decorator, so they cannot drift.
 */
export function AdminApi(): ClassDecorator {
  return applyDecorators(
    UseGuards(ApiKeyGuard),
    UsePipes(strictValidationPipe),
    ApiSecurity(API_KEY_SCHEME),
    ApiUnauthorizedResponse({ description: 'Missing or wrong X-API-Key', type: ErrorResponseDto }),
    ApiBadRequestResponse({ description: 'VALIDATION_ERROR', type: ErrorResponseDto }),
    ApiTooManyRequestsResponse({ description: 'RATE_LIMITED', type: ErrorResponseDto }),
    ApiServiceUnavailableResponse({ description: 'Database unavailable', type: ErrorResponseDto }),
  ) as ClassDecorator;
}
