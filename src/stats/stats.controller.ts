import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminRoute } from '../common/auth/admin-route.decorator';
import { CurrentProductScope, type ProductScope } from '../common/auth/actor';
import { ProductStatsDto } from './dto/product-stats.dto';
import { StatsService } from './stats.service';

@ApiTags('admin: stats')
@AdminRoute('stats:read')
@Controller('api/v1/admin/stats')
export class StatsController {
  constructor(private readonly stats: StatsService) {}

  @Get()
  @ApiOperation({
    summary: 'Statistics per product',
    description: 'Every product (a token limited to products: only those), including those without licences; computed at request time.',
  })
  @ApiOkResponse({ type: [ProductStatsDto] })
  productStats(@CurrentProductScope() products: ProductScope): Promise<ProductStatsDto[]> {
    return this.stats.productStats(products);
  }
}
