import { Get, Query, Render } from '@nestjs/common';
import { ACTOR_TYPES, AUDIT_ACTIONS } from '../../audit/audit-entry.entity';
import { AuditService } from '../../audit/audit.service';
import { AuditQueryDto } from '../../audit/dto/audit-query.dto';
import { AppError, FieldError } from '../../common/errors/app-error';
import { validFilters } from '../http/check-dto';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { pageNumber, pagination } from './pagination';

export const AUDIT_PAGE_SIZE = 50;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

@DashboardController('audit')
export class AuditPageController {
  constructor(private readonly audit: AuditService) {}

  /** The audit log with the admin API's filters; dates are whole UTC days, `to` inclusive. */
  @Get()
  @Render('audit')
  async list(@Query() query: Record<string, unknown>) {
    const text = (name: string) => (typeof query[name] === 'string' ? query[name].trim() : '');
    const shown: Record<string, string> = {};
    for (const name of ['action', 'actor_type', 'license_id', 'from', 'to']) if (text(name)) shown[name] = text(name);
    const filters: Record<string, string> = { ...shown };
    if (filters.from) filters.from = DATE.test(filters.from) ? `${filters.from}T00:00:00Z` : filters.from;
    if (filters.to) filters.to = DATE.test(filters.to) ? `${filters.to}T23:59:59.999Z` : filters.to;
    const page = pageNumber(query.page);
    const { value, errors } = await validFilters(AuditQueryDto, filters, { limit: AUDIT_PAGE_SIZE, offset: (page - 1) * AUDIT_PAGE_SIZE });
    const result = await this.audit.listEntries(value).catch((err: unknown) => {
      // from after to: show the message and the whole range instead.
      if (!(err instanceof AppError) || err.status !== 400) throw err;
      errors.push({ field: 'from', message: err.details?.fields ? (err.details.fields as FieldError[])[0].message : err.message });
      delete filters.from;
      delete filters.to;
      return this.audit.listEntries({ ...value, from: undefined, to: undefined });
    });
    for (const name of Object.keys(shown)) if (!(name in filters)) delete shown[name];
    return {
      title: 'Audit log',
      nav: 'audit',
      entries: result.items,
      filters: shown,
      filterErrors: errors.length ? errors.map((e) => e.message).join('; ') : null,
      actions: AUDIT_ACTIONS,
      actorTypes: ACTOR_TYPES,
      pagination: pagination('/audit', shown, page, AUDIT_PAGE_SIZE, result.total),
    };
  }
}
