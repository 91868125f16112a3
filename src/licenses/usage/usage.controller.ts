import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminRoute } from '../../common/auth/admin-route.decorator';
import { Actor, CurrentActor, CurrentProductScope, type ProductScope } from '../../common/auth/actor';
import { ErrorResponseDto } from '../../common/errors/error-response.dto';
import { IdParamPipe } from '../../common/http/id-param.pipe';
import { UsageReportDto } from './usage.dto';
import { UsageService } from './usage.service';

const NOT_FOUND = { description: "NOT_FOUND: no licence with this id (among the credential's products)", type: ErrorResponseDto };

/** Admin view of the usage meter (docs/licences.md, Usage metering). */
@ApiTags('admin: licenses')
@Controller('api/v1/admin/licenses')
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  @Get(':id/usage')
  @AdminRoute('licenses:read')
  @ApiOperation({ summary: "A licence's uses this period, and one row per past period (newest first)" })
  @ApiOkResponse({ type: UsageReportDto })
  @ApiNotFoundResponse(NOT_FOUND)
  report(@Param('id', IdParamPipe) id: number, @CurrentProductScope() products: ProductScope): Promise<UsageReportDto> {
    return this.usage.usageReport(id, products);
  }

  @Post(':id/usage/reset')
  @AdminRoute('licenses:write')
  @HttpCode(200)
  @ApiOperation({ summary: "Set this period's count to 0 (audit license.usage_reset)", description: 'No body.' })
  @ApiOkResponse({ type: UsageReportDto })
  @ApiNotFoundResponse(NOT_FOUND)
  reset(
    @Param('id', IdParamPipe) id: number,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() products: ProductScope,
  ): Promise<UsageReportDto> {
    return this.usage.resetUsage(id, actor, products);
  }
}
