import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminApi } from '../common/auth/admin-api.decorator';
import { ProductStatsDto } from './dto/product-stats.dto';
import { StatsService } from './stats.service';

@ApiTags('admin: stats')
@AdminApi()
@Controller('api/v1/admin/stats')
export class StatsController {
  constructor(private readonly stats: StatsService) {}

  @Get()
  @ApiOperation({
    summary: 'Statistics per product',
    description: 'Every product, including those without licences; computed at request time.',
  })
  @ApiOkResponse({ type: [ProductStatsDto] })
  productStats(): Promise<ProductStatsDto[]> {
    return this.stats.productStats();
  }
}
