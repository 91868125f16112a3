import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AdminApi } from '../common/auth/admin-api.decorator';
import { setTotalCount, TOTAL_COUNT_HEADERS } from '../common/http/page-query.dto';
import { AuditService } from './audit.service';
import { AuditEntryDto } from './dto/audit-entry.dto';
import { AuditQueryDto } from './dto/audit-query.dto';

@ApiTags('admin: audit')
@AdminApi()
@Controller('api/v1/admin/audit')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @ApiOperation({ summary: 'Read the audit log', description: 'Every state change and sign-in, newest first; filters combine with AND.' })
  @ApiOkResponse({ type: [AuditEntryDto], headers: TOTAL_COUNT_HEADERS })
  async list(@Query() query: AuditQueryDto, @Res({ passthrough: true }) res: Response): Promise<AuditEntryDto[]> {
    return setTotalCount(res, await this.audit.listEntries(query));
  }
}
