import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiConflictResponse, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminRoute } from '../common/auth/admin-route.decorator';
import { Actor, CurrentActor, CurrentProductScope, type ProductScope } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { IdParamPipe } from '../common/http/id-param.pipe';
import { CreateRelayPoolDto, RelayPoolDto, RelayPoolIssuedDto } from './dto/relay-pool.dto';
import { RelayPoolIssuer } from './relay-pools';
import { ApiArmoredRequestRefusal } from './armored-refusal';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NOT_FOUND = {
  description: "NOT_FOUND: no licence with this id (among the credential's products), or no such pool of it",
  type: ErrorResponseDto,
};

/** Relay pools (docs/relay.md, Issuing a pool): seats of a licence lent to a relay on a network with no way to us. */
@ApiTags('admin: licenses')
@Controller('api/v1/admin')
export class RelayPoolsController {
  constructor(private readonly pools: RelayPoolIssuer) {}

  @Post('relay-pools')
  @AdminRoute('licenses:write')
  @HttpCode(201)
  @ApiOperation({
    summary: "Issue a relay's pool from its pool request",
    description:
      "Holds the seats while the pool is valid; a new request from the same relay key replaces that relay's pool. Audited and told as license.relay_pool_issued.",
  })
  @ApiCreatedResponse({ type: RelayPoolIssuedDto })
  @ApiArmoredRequestRefusal('its fields', 'INVALID_KEY, KEY_REVOKED, KEY_SUSPENDED, KEY_EXPIRED, ACTIVATION_LIMIT_REACHED')
  issue(
    @Body() body: CreateRelayPoolDto,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() products: ProductScope,
  ): Promise<RelayPoolIssuedDto> {
    return this.pools.issue(body, actor, products);
  }

  @Get('licenses/:id/relay-pools')
  @AdminRoute('licenses:read')
  @ApiOperation({ summary: "A licence's relay pools, newest first" })
  @ApiOkResponse({ type: [RelayPoolDto] })
  @ApiNotFoundResponse(NOT_FOUND)
  list(@Param('id', IdParamPipe) id: number, @CurrentProductScope() products: ProductScope): Promise<RelayPoolDto[]> {
    return this.pools.list(id, products);
  }

  @Post('licenses/:id/relay-pools/:pool_id/end')
  @AdminRoute('licenses:write')
  @HttpCode(200)
  @ApiOperation({
    summary: 'End a relay pool now',
    description:
      "Its seats return at once on this server; the relay, offline, lends them until the pool's expires_at. Audited as license.relay_pool_ended.",
  })
  @ApiOkResponse({ type: RelayPoolDto })
  @ApiNotFoundResponse(NOT_FOUND)
  @ApiConflictResponse({ description: 'CONFLICT: the pool was already ended or replaced', type: ErrorResponseDto })
  end(
    @Param('id', IdParamPipe) id: number,
    @Param('pool_id') poolId: string,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() products: ProductScope,
  ): Promise<RelayPoolDto> {
    if (!UUID.test(poolId)) throw AppError.notFound('Relay pool');
    return this.pools.end(id, poolId.toLowerCase(), actor, products);
  }
}
