import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiConflictResponse, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Actor, CurrentActor } from '../common/auth/actor';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { IdParamPipe } from '../common/http/id-param.pipe';
import { PageQueryDto, setTotalCount, TOTAL_COUNT_HEADERS } from '../common/http/page-query.dto';
import { CurrentAdminAccess } from './admin-auth.guard';
import type { AdminAccess } from './admin-credentials';
import { AdminRoute } from './admin-route.decorator';
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
      'The token (`lst_...`) is in this answer only; the server keeps its SHA-256. A token can grant only scopes and products it holds itself (403 otherwise).',
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
  @ApiOperation({ summary: 'List tokens (never the token itself), newest first, with last_used_at and status' })
  @ApiOkResponse({ type: [AdminTokenDto], headers: TOTAL_COUNT_HEADERS })
  async list(@Query() query: PageQueryDto, @Res({ passthrough: true }) res: Response): Promise<AdminTokenDto[]> {
    return setTotalCount(res, await this.tokens.listTokens(query));
  }

  @Delete(':id')
  @ApiOperation({ summary: 'Revoke a token', description: 'Effective at once on every instance: the next request with it gets 401.' })
  @ApiOkResponse({ type: AdminTokenDto })
  @ApiNotFoundResponse({ description: 'NOT_FOUND: no token with this id', type: ErrorResponseDto })
  @ApiConflictResponse({ description: 'ALREADY_REVOKED', type: ErrorResponseDto })
  revoke(@Param('id', IdParamPipe) id: number, @CurrentActor() actor: Actor): Promise<AdminTokenDto> {
    return this.tokens.revokeToken(id, actor);
  }
}
