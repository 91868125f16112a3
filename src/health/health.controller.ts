import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { HealthService } from './health.service';

export class HealthDto {
  @ApiProperty({ example: 'ok', enum: ['ok', 'degraded', 'error'], description: 'degraded: Redis is down but requests are served (200)' })
  status: 'ok' | 'degraded' | 'error';
  @ApiProperty({ example: 'up', enum: ['up', 'down'] }) database: 'up' | 'down';
  @ApiProperty({ required: false, enum: ['up', 'down'], description: 'only when REDIS_URL is set' }) redis?: 'up' | 'down';
}

@ApiTags('health')
@Controller('api/v1/health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get()
  @ApiOperation({ summary: 'Readiness: the server and its database' })
  @ApiOkResponse({ type: HealthDto })
  @ApiServiceUnavailableResponse({ type: HealthDto, description: 'A dependency is down' })
  async check(@Res({ passthrough: true }) res: Response): Promise<HealthDto> {
    const report = await this.health.check();
    if (report.status === 'error') res.status(503);
    return report;
  }

  @Get('live')
  @ApiOperation({ summary: 'Liveness: answers without touching any dependency' })
  @ApiOkResponse({ schema: { example: { status: 'ok' } } })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }
}
