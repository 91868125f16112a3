import { Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiConflictResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AdminRoute } from '../common/auth/admin-route.decorator';
import { Actor, CurrentActor, CurrentProductScope, type ProductScope } from '../common/auth/actor';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { IdParamPipe } from '../common/http/id-param.pipe';
import { setTotalCount, TOTAL_COUNT_HEADERS } from '../common/http/page-query.dto';
import { ListMailQueryDto, MailMessageDto } from './dto/mail.dto';
import { MailService } from './mail.service';

/** The mail outbox for staff (docs/mail.md, Admin API): reading needs licenses:read, a retry licenses:write. */
@ApiTags('admin: mail')
@Controller('api/v1/admin/mail')
export class MailController {
  constructor(private readonly mail: MailService) {}

  @Get()
  @AdminRoute('licenses:read')
  @ApiOperation({
    summary: 'Customer e-mail, newest first',
    description: "A token limited to products sees only the messages about its products' licences.",
  })
  @ApiOkResponse({ type: [MailMessageDto], headers: TOTAL_COUNT_HEADERS })
  async list(
    @Query() query: ListMailQueryDto,
    @CurrentProductScope() products: ProductScope,
    @Res({ passthrough: true }) res: Response,
  ): Promise<MailMessageDto[]> {
    const page = await this.mail.list(query.limit, query.offset ?? 0, products);
    return setTotalCount(res, { items: page.items.map((row) => MailMessageDto.from(row)), total: page.total });
  }

  @Post(':id/retry')
  @HttpCode(200)
  @AdminRoute('licenses:write')
  @ApiOperation({ summary: 'Send a failed message again (a fresh retry schedule)', description: 'Audited as `mail.retried`.' })
  @ApiOkResponse({ type: MailMessageDto })
  @ApiNotFoundResponse({
    description: "NOT_FOUND: no such message, or (for a token limited to products) one about another product's licence",
    type: ErrorResponseDto,
  })
  @ApiConflictResponse({ description: 'CONFLICT: the message is not failed', type: ErrorResponseDto })
  async retry(
    @Param('id', IdParamPipe) id: number,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() products: ProductScope,
  ): Promise<MailMessageDto> {
    return MailMessageDto.from(await this.mail.retry(String(id), actor, products));
  }
}
