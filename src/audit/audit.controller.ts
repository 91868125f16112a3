import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AdminRoute } from '../auth/admin-route.decorator';
import { CurrentProductScope, type ProductScope } from '../common/auth/actor';
import { EXPORT_RESPONSE, sendExport } from '../common/http/export';
import { setTotalCount, TOTAL_COUNT_HEADERS } from '../common/http/page-query.dto';
import { AuditService } from './audit.service';
import { AuditEntryDto } from './dto/audit-entry.dto';
import { AuditQueryDto, ExportAuditQueryDto } from './dto/audit-query.dto';

@ApiTags('admin: audit')
@AdminRoute('audit:read')
@Controller('api/v1/admin/audit')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @ApiOperation({
    summary: 'Read the audit log',
    description:
      "Every state change and sign-in, newest first; filters combine with AND. A token limited to products sees only those products' entries.",
  })
  @ApiOkResponse({ type: [AuditEntryDto], headers: TOTAL_COUNT_HEADERS })
  async list(
    @Query() query: AuditQueryDto,
    @CurrentProductScope() products: ProductScope,
    @Res({ passthrough: true }) res: Response,
  ): Promise<AuditEntryDto[]> {
    return setTotalCount(res, await this.audit.listEntries(query, products));
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
