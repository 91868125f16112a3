import { Body, Controller, Get, HttpCode, Param, Post, Put, Query, Res } from '@nestjs/common';
import { ApiConflictResponse, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AdminRoute } from '../common/auth/admin-route.decorator';
import { DeleteRoute } from '../common/http/delete-route';
import { Actor, CurrentActor, CurrentProductScope, type ProductScope } from '../common/auth/actor';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { IdParamPipe } from '../common/http/id-param.pipe';
import { setTotalCount, TOTAL_COUNT_HEADERS } from '../common/http/page-query.dto';
import {
  CreatedWebhookDto,
  CreateWebhookDto,
  ListDeliveriesQueryDto,
  UpdateWebhookDto,
  WebhookDeliveryDto,
  WebhookEndpointDto,
  WebhookSecretDto,
} from './dto/webhook.dto';
import { WebhooksService } from './webhooks.service';

const NOT_FOUND = {
  description: "NOT_FOUND: no such endpoint, or (for a token limited to products) one not limited to (some of) the token's products",
  type: ErrorResponseDto,
};

/** Webhook endpoints, their secrets and deliveries (docs/webhooks.md, Endpoints). */
@ApiTags('admin: webhooks')
@AdminRoute('webhooks:manage')
@Controller('api/v1/admin')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post('webhooks')
  @ApiOperation({
    summary: 'Register an endpoint; the answer holds its secret, shown only here',
    description: "Made by a token limited to products, it receives only those products' licence and product events.",
  })
  @ApiCreatedResponse({ type: CreatedWebhookDto })
  create(
    @Body() body: CreateWebhookDto,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() products: ProductScope,
  ): Promise<CreatedWebhookDto> {
    return this.webhooks.createEndpoint(body, actor, products);
  }

  @Get('webhooks')
  @ApiOperation({
    summary: 'All endpoints (never their secrets)',
    description: 'A token limited to products lists only endpoints limited to (some of) its products.',
  })
  @ApiOkResponse({ type: [WebhookEndpointDto] })
  list(@CurrentProductScope() products: ProductScope): Promise<WebhookEndpointDto[]> {
    return this.webhooks.listEndpoints(products);
  }

  @Get('webhooks/:id')
  @ApiOperation({ summary: 'One endpoint (never its secret)' })
  @ApiOkResponse({ type: WebhookEndpointDto })
  @ApiNotFoundResponse(NOT_FOUND)
  get(@Param('id', IdParamPipe) id: number, @CurrentProductScope() products: ProductScope): Promise<WebhookEndpointDto> {
    return this.webhooks.getEndpoint(id, products);
  }

  @Put('webhooks/:id')
  @ApiOperation({ summary: 'Partial update of url, events, description, active' })
  @ApiOkResponse({ type: WebhookEndpointDto })
  @ApiNotFoundResponse(NOT_FOUND)
  update(
    @Param('id', IdParamPipe) id: number,
    @Body() body: UpdateWebhookDto,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() products: ProductScope,
  ): Promise<WebhookEndpointDto> {
    return this.webhooks.updateEndpoint(id, body, actor, products);
  }

  @DeleteRoute('webhooks/:id', NOT_FOUND)
  @ApiOperation({ summary: 'Delete an endpoint and its deliveries' })
  async remove(
    @Param('id', IdParamPipe) id: number,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() products: ProductScope,
  ): Promise<void> {
    await this.webhooks.deleteEndpoint(id, actor, products);
  }

  @Post('webhooks/:id/rotate-secret')
  @HttpCode(200)
  @ApiOperation({ summary: 'A new secret for the endpoint, shown only here; the old one stops signing at once' })
  @ApiOkResponse({ type: WebhookSecretDto })
  @ApiNotFoundResponse(NOT_FOUND)
  rotate(
    @Param('id', IdParamPipe) id: number,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() products: ProductScope,
  ): Promise<WebhookSecretDto> {
    return this.webhooks.rotateSecret(id, actor, products);
  }

  @Get('webhooks/:id/deliveries')
  @ApiOperation({ summary: "The endpoint's deliveries, newest first" })
  @ApiOkResponse({ type: [WebhookDeliveryDto], headers: TOTAL_COUNT_HEADERS })
  @ApiNotFoundResponse(NOT_FOUND)
  async deliveries(
    @Param('id', IdParamPipe) id: number,
    @Query() query: ListDeliveriesQueryDto,
    @CurrentProductScope() products: ProductScope,
    @Res({ passthrough: true }) res: Response,
  ): Promise<WebhookDeliveryDto[]> {
    return setTotalCount(res, await this.webhooks.listDeliveries(id, query.limit, query.offset ?? 0, products));
  }

  @Post('webhook-deliveries/:id/retry')
  @HttpCode(200)
  @ApiOperation({ summary: 'Send a failed delivery again (same webhook-id, a fresh retry schedule)' })
  @ApiOkResponse({ type: WebhookDeliveryDto })
  @ApiNotFoundResponse(NOT_FOUND)
  @ApiConflictResponse({ description: 'CONFLICT: the delivery is not failed', type: ErrorResponseDto })
  retry(
    @Param('id', IdParamPipe) id: number,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() products: ProductScope,
  ): Promise<WebhookDeliveryDto> {
    return this.webhooks.retryDelivery(String(id), actor, products);
  }
}
