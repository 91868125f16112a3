import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { HealthService } from './health.service';

export class HealthDto {
  @ApiProperty({ example: 'ok', enum: ['ok', 'error'] }) status: 'ok' | 'error';
  @ApiProperty({ example: 'up', enum: ['up', 'down'] }) database: 'up' | 'down';
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
    if (report.status !== 'ok') res.status(503);
    return report;
  }

  @Get('live')
  @ApiOperation({ summary: 'Liveness: answers without touching any dependency' })
  @ApiOkResponse({ schema: { example: { status: 'ok' } } })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }
}
