import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AdminRoute } from '../common/auth/admin-route.decorator';
import { CurrentProductScope, type ProductScope } from '../common/auth/actor';
import { EXPORT_RESPONSE, sendExport } from '../common/http/export';
import { DEFAULT_PAGE_LIMIT, KEYSET_PAGE_HEADERS, setKeysetPageHeaders } from '../common/http/page-query.dto';
import { AuditService } from './audit.service';
import { AuditEntryDto } from './dto/audit-entry.dto';
import { AuditQueryDto, ExportAuditQueryDto } from './dto/audit-query.dto';

const AUDIT_PATH = '/api/v1/admin/audit';

@ApiTags('admin: audit')
@AdminRoute('audit:read')
@Controller(AUDIT_PATH.slice(1))
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @ApiOperation({
    summary: 'Read the audit log',
    description:
      "Every state change and sign-in, newest first; filters combine with AND. A token limited to products sees only those products' entries; " +
      'a `product` it may not see, or that no product has, and an `actor` nobody is, match nothing (an empty list, never the filter ignored). ' +
      'Page with `after` (keyset: follow the `Link` rel="next" header, the same cost at any depth) or `offset` (costs grow with the offset).',
  })
  @ApiOkResponse({ type: [AuditEntryDto], headers: KEYSET_PAGE_HEADERS })
  async list(
    @Query() query: AuditQueryDto,
    @CurrentProductScope() products: ProductScope,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<AuditEntryDto[]> {
    const page = await this.audit.listEntries(query, products);
    return setKeysetPageHeaders(res, req, AUDIT_PATH, query.limit ?? DEFAULT_PAGE_LIMIT, page);
  }

  @Get('export')
  @ApiOperation({
    summary: 'Export every matching audit entry (CSV or NDJSON)',
    description:
      'The list filters, no paging, newest first; streamed from a database cursor. CSV cells starting with = + - @ tab or CR get a leading apostrophe.',
  })
  @ApiOkResponse(EXPORT_RESPONSE)
  async export(@Query() query: ExportAuditQueryDto, @CurrentProductScope() products: ProductScope, @Res() res: Response): Promise<void> {
    sendExport(res, await this.audit.exportEntries(query, products), query.format, 'audit');
  }
}
