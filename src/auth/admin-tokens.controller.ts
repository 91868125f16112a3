import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiConflictResponse, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Actor, CurrentActor, CurrentProductScope, type ProductScope } from '../common/auth/actor';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { IdParamPipe } from '../common/http/id-param.pipe';
import { PageQueryDto, setTotalCount, TOTAL_COUNT_HEADERS } from '../common/http/page-query.dto';
import { CurrentAdminAccess } from './admin-authorizer';
import type { AdminAccess } from './admin-credentials';
import { AdminRoute } from '../common/auth/admin-route.decorator';
import { AdminTokensService } from './admin-tokens.service';
import { AdminTokenDto, CreateAdminTokenDto, CreatedAdminTokenDto } from './dto/admin-token.dto';

@ApiTags('admin: tokens')
@AdminRoute('tokens:manage')
@Controller('api/v1/admin/tokens')
export class AdminTokensController {
  constructor(private readonly tokens: AdminTokensService) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Issue a scoped admin token',
    description:
      'The token (`lst_...`) is in this answer only; the server keeps its SHA-256. A token can grant only scopes and products it holds itself (403 otherwise), and a token that expires only tokens that expire no later (400 on expires_at). signing-keys:manage needs a token for every product (400 on scopes).',
  })
  @ApiCreatedResponse({ type: CreatedAdminTokenDto })
  @ApiConflictResponse({ description: 'CONFLICT: a token with this name exists', type: ErrorResponseDto })
  create(
    @Body() body: CreateAdminTokenDto,
    @CurrentActor() actor: Actor,
    @CurrentAdminAccess() issuer: AdminAccess | undefined,
  ): Promise<CreatedAdminTokenDto> {
    return this.tokens.createToken(body, actor, issuer ?? null);
  }

  @Get()
  @ApiOperation({
    summary: 'List tokens (never the token itself), newest first, with last_used_at and status',
    description: 'A token limited to products lists only tokens limited to (some of) its products.',
  })
  @ApiOkResponse({ type: [AdminTokenDto], headers: TOTAL_COUNT_HEADERS })
  async list(
    @Query() query: PageQueryDto,
    @CurrentProductScope() products: ProductScope,
    @Res({ passthrough: true }) res: Response,
  ): Promise<AdminTokenDto[]> {
    return setTotalCount(res, await this.tokens.listTokens(query, products));
  }

  @Delete(':id')
  @ApiOperation({ summary: 'Revoke a token', description: 'Effective at once on every instance: the next request with it gets 401.' })
  @ApiOkResponse({ type: AdminTokenDto })
  @ApiNotFoundResponse({
    description:
      "NOT_FOUND: no token with this id, or (for a token limited to products) one not limited to (some of) the caller's products",
    type: ErrorResponseDto,
  })
  @ApiConflictResponse({ description: 'ALREADY_REVOKED', type: ErrorResponseDto })
  revoke(
    @Param('id', IdParamPipe) id: number,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() products: ProductScope,
  ): Promise<AdminTokenDto> {
    return this.tokens.revokeToken(id, actor, products);
  }
}
