import { ApiProperty } from '@nestjs/swagger';

export class HealthDto {
  @ApiProperty({ example: 'ok', enum: ['ok', 'degraded', 'error'], description: 'degraded: Redis is down but requests are served (200)' })
  status: 'ok' | 'degraded' | 'error';
  @ApiProperty({ example: 'up', enum: ['up', 'down'] }) database: 'up' | 'down';
  @ApiProperty({ required: false, enum: ['up', 'down'], description: 'only when REDIS_URL is set' }) redis?: 'up' | 'down';
}

export class LivenessDto {
  @ApiProperty({ enum: ['ok'], example: 'ok' }) status: 'ok';
}
