import { Controller, Get, Query } from '@nestjs/common';
import { ApiBadRequestResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { AdminRoute } from '../common/auth/admin-route.decorator';
import { CurrentProductScope, type ProductScope } from '../common/auth/actor';
import { DailyStatsDto, DailyStatsQueryDto } from './dto/daily-stats.dto';
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

  @Get('daily')
  @ApiOperation({
    summary: "Client and licence events per UTC day, for one product or all of the credential's",
    description:
      "One row per UTC day from `from` to `to`, both included (at most 366 days; default the last 30), oldest first, zeros included: new seats bound, activations refused, deactivations, trials started and licences created. A product outside a limited token's products is 404, like an unknown one.",
  })
  @ApiOkResponse({ type: [DailyStatsDto] })
  @ApiBadRequestResponse({
    type: ErrorResponseDto,
    description: 'VALIDATION_ERROR: a day that is not a date, `from` after `to`, more than 366 days',
  })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: "NOT_FOUND: no such product (or not one of the token's)" })
  daily(@Query() query: DailyStatsQueryDto, @CurrentProductScope() products: ProductScope): Promise<DailyStatsDto[]> {
    return this.stats.daily(query, products);
  }
}
