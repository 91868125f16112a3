import { Controller, Get, Header, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiSecurity, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { API_KEY_SCHEME } from '../auth/admin-route.decorator';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { MetricsGuard } from './metrics.guard';
import { MetricsService } from './metrics.service';

@ApiTags('operations')
@Controller('metrics')
@UseGuards(MetricsGuard)
@ApiSecurity(API_KEY_SCHEME)
@ApiBearerAuth()
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get()
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  @ApiOperation({ summary: 'Prometheus metrics of this instance (METRICS_TOKEN as Bearer, or X-API-Key)' })
  @ApiOkResponse({ description: 'Prometheus text format' })
  @ApiUnauthorizedResponse({ type: ErrorResponseDto })
  scrape(): Promise<string> {
    return this.metrics.render();
  }
}
