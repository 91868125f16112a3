import { Body, Controller, Get, HttpCode, Param, Post, Put, Query, Res } from '@nestjs/common';
import { ApiConflictResponse, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Actor, CurrentActor } from '../common/auth/actor';
import { AdminRoute } from '../common/auth/admin-route.decorator';
import { DeleteRoute } from '../common/http/delete-route';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { IdParamPipe } from '../common/http/id-param.pipe';
import { setTotalCount, TOTAL_COUNT_HEADERS } from '../common/http/page-query.dto';
import { ListStoreEventsQueryDto, StoreEventDto } from './dto/store-event.dto';
import { CreateStorePlanDto, StorePlanDto, UpdateStorePlanDto } from './dto/store-plan.dto';
import { StoreEventsService } from './store-events.service';
import { StorePlansService } from './store-plans.service';

const PLAN_NOT_FOUND = { description: 'NOT_FOUND: no such plan', type: ErrorResponseDto };

/** Store plans and the store event ledger (docs/stores.md); stores:manage, a scope for credentials of every product. */
@ApiTags('admin: stores')
@AdminRoute('stores:manage')
@Controller('api/v1/admin')
export class StoresAdminController {
  constructor(
    private readonly plans: StorePlansService,
    private readonly events: StoreEventsService,
  ) {}

  @Post('store-plans')
  @ApiOperation({ summary: "Map a store's price to the licence it sells" })
  @ApiCreatedResponse({ type: StorePlanDto })
  @ApiConflictResponse({ description: 'CONFLICT: the store has a plan for this price already', type: ErrorResponseDto })
  create(@Body() body: CreateStorePlanDto, @CurrentActor() actor: Actor): Promise<StorePlanDto> {
    return this.plans.create(body, actor);
  }

  @Get('store-plans')
  @ApiOperation({ summary: 'Every store plan' })
  @ApiOkResponse({ type: [StorePlanDto] })
  list(): Promise<StorePlanDto[]> {
    return this.plans.list();
  }

  @Get('store-plans/:id')
  @ApiOperation({ summary: 'One store plan' })
  @ApiOkResponse({ type: StorePlanDto })
  @ApiNotFoundResponse(PLAN_NOT_FOUND)
  get(@Param('id', IdParamPipe) id: number): Promise<StorePlanDto> {
    return this.plans.get(id);
  }

  @Put('store-plans/:id')
  @ApiOperation({ summary: 'Partial update; licences made before keep their terms until a store event changes them' })
  @ApiOkResponse({ type: StorePlanDto })
  @ApiNotFoundResponse(PLAN_NOT_FOUND)
  @ApiConflictResponse({ description: 'CONFLICT: the store has a plan for this price already', type: ErrorResponseDto })
  update(@Param('id', IdParamPipe) id: number, @Body() body: UpdateStorePlanDto, @CurrentActor() actor: Actor): Promise<StorePlanDto> {
    return this.plans.update(id, body, actor);
  }

  @DeleteRoute('store-plans/:id', PLAN_NOT_FOUND)
  @ApiOperation({ summary: 'Delete a plan; its licences live on (a later end of their subscription expires them)' })
  async remove(@Param('id', IdParamPipe) id: number, @CurrentActor() actor: Actor): Promise<void> {
    await this.plans.remove(id, actor);
  }

  @Get('store-events')
  @ApiOperation({ summary: 'Store events, newest first; needs_attention=true lists what a seller must look at' })
  @ApiOkResponse({ type: [StoreEventDto], headers: TOTAL_COUNT_HEADERS })
  async listEvents(@Query() query: ListStoreEventsQueryDto, @Res({ passthrough: true }) res: Response): Promise<StoreEventDto[]> {
    const filter = {
      store: query.store,
      status: query.status,
      licenseId: query.license_id,
      needsAttention: query.needs_attention === undefined ? undefined : query.needs_attention === 'true',
    };
    return setTotalCount(res, await this.events.list(filter, query.limit, query.offset ?? 0));
  }

  @Post('store-events/:id/replay')
  @HttpCode(200)
  @ApiOperation({ summary: 'Process an ignored, pending or failed event again (after adding its plan, say)' })
  @ApiOkResponse({ type: StoreEventDto })
  @ApiNotFoundResponse({ description: 'NOT_FOUND: no such event', type: ErrorResponseDto })
  @ApiConflictResponse({ description: 'CONFLICT: the event was processed already', type: ErrorResponseDto })
  replay(@Param('id', IdParamPipe) id: number): Promise<StoreEventDto> {
    return this.events.replay(String(id));
  }
}
