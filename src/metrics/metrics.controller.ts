import { applyDecorators, Controller, Get, Header, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiSecurity, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { API_KEY_SCHEME } from '../common/auth/admin-route.decorator';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { RateLimit } from '../common/http/throttling';
import { METRICS_TOKEN_SCHEME, MetricsGuard } from './metrics.guard';
import { MetricsService } from './metrics.service';

@ApiTags('operations')
@Controller('metrics')
// The admin API's per-IP limit and bucket, counted before the credentials are checked: /metrics is no side door for guessing keys.
@applyDecorators(RateLimit('admin'), UseGuards(MetricsGuard))
@ApiSecurity(API_KEY_SCHEME)
@ApiBearerAuth(METRICS_TOKEN_SCHEME)
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get()
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  @ApiOperation({
    summary: 'Prometheus metrics of this instance',
    description: 'Send METRICS_TOKEN as a Bearer token (for a scraper), or the admin X-API-Key.',
  })
  @ApiOkResponse({ description: 'Prometheus text format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } })
  @ApiUnauthorizedResponse({ description: 'UNAUTHORIZED: neither a valid METRICS_TOKEN nor a valid X-API-Key', type: ErrorResponseDto })
  scrape(): Promise<string> {
    return this.metrics.render();
  }
}
