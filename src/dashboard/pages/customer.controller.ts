import { Get, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AuditService } from '../../audit/audit.service';
import { Actor, CurrentActor, CurrentProductScope, type ProductScope } from '../../common/auth/actor';
import { AppError, FieldError } from '../../common/errors/app-error';
import { CUSTOMER_NOTE_MAX_LENGTH, CustomerRef, customerRef, CustomersService } from '../../licenses/customers/customers.service';
import { asFormBody, formText } from '../../html/forms';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { summariseErrors } from '../http/form-errors';
import { setFlash } from '../http/view-locals';
import { byNewestRefusal, COLUMNS, LICENSES_PAGE_SIZE, REFUSED_FILTER, REFUSED_MAX, text, withRefusals } from './license-list';
import { pageNumber, pagination } from './pagination';

/** Audit entries per page of a customer's activity timeline. */
const CUSTOMER_TIMELINE_PAGE_SIZE = 20;
const NOTE_LABELS = { note: 'Note' };

/** The query string that names a customer on the customer page. */
const customerParams = (ref: CustomerRef) => new URLSearchParams(ref.email !== undefined ? { email: ref.email } : { pib: ref.pib });

/** A customer's page and notes (docs/dashboard.md, A customer's page). Registered before the licence page's `:id`. */
@DashboardController('licenses/customer')
export class CustomerPagesController {
  constructor(
    private readonly audit: AuditService,
    private readonly customers: CustomersService,
  ) {}

  /**
   * Licences (`refused=7`: those refused in the last 7 days, newest refusal first), machines bound now, the activity of
   * those licences (newest first, `tpage` pages it) and the staff's notes. By e-mail (any case) or PIB; a name alone is a search.
   */
  @Get()
  async customer(@Query() query: Record<string, unknown>, @Res() res: Response, @CurrentProductScope() scope: ProductScope): Promise<void> {
    const ref = customerRef(text(query, 'email'), text(query, 'pib'));
    if (!ref) return res.redirect(303, `/licenses?${new URLSearchParams({ q: text(query, 'name') }).toString()}`);
    await this.renderCustomer(res, 200, ref, query, {}, scope);
  }

  /** A staff note about the customer (CSRF-checked, 1-2000 characters, audited as `customer.note_added`). */
  @Post('notes')
  async addNote(
    @Req() req: Request,
    @Res() res: Response,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() scope: ProductScope,
  ): Promise<void> {
    const body = asFormBody(req.body);
    const ref = customerRef(formText(body, 'email'), formText(body, 'pib'));
    if (!ref) throw AppError.notFound('Customer');
    const note = typeof body.note === 'string' ? body.note : '';
    try {
      await this.customers.addNote(ref, note, actor, scope);
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 400) throw err;
      return this.renderCustomer(res, 400, ref, {}, { note, errors: err.details?.fields as FieldError[] | undefined }, scope);
    }
    setFlash(req, 'success', 'Note added.');
    res.redirect(303, `/licenses/customer?${customerParams(ref).toString()}#notes`);
  }

  private async renderCustomer(
    res: Response,
    status: number,
    ref: CustomerRef,
    query: Record<string, unknown>,
    form: { note?: string; errors?: FieldError[] },
    scope: ProductScope,
  ): Promise<void> {
    const page = pageNumber(query.page);
    const timelinePage = pageNumber(query.tpage);
    const refusedAt = text(query, 'refused') === REFUSED_FILTER ? await this.audit.recentlyRefused(REFUSED_MAX, scope) : undefined;
    const found = await this.customers.customerPage(
      ref,
      {
        // Refused ones are few (at most REFUSED_MAX): read whole, ordered by their refusal, then paged.
        licenses: refusedAt
          ? { limit: REFUSED_MAX, offset: 0, ids: [...refusedAt.keys()] }
          : { limit: LICENSES_PAGE_SIZE, offset: (page - 1) * LICENSES_PAGE_SIZE },
        timeline: { limit: CUSTOMER_TIMELINE_PAGE_SIZE, offset: (timelinePage - 1) * CUSTOMER_TIMELINE_PAGE_SIZE },
      },
      scope,
    );
    // An account limited to products meets only customers with a licence of theirs (docs/dashboard.md, Limited accounts).
    if (scope !== null && !found.known) throw AppError.notFound('Customer');
    const params = Object.fromEntries(customerParams(ref));
    const kept = { ...params, ...(refusedAt ? { refused: REFUSED_FILTER } : {}) };
    const names = [...new Set(found.licenses.items.map((l) => l.customer_name))];
    const timelinePaging = pagination(
      '/licenses/customer',
      { ...kept, page: page > 1 ? page : undefined },
      timelinePage,
      CUSTOMER_TIMELINE_PAGE_SIZE,
      found.timeline.total,
    );
    const tpage = (href: string | null) => href && href.replace(/([?&])page=(\d+)$/, '$1tpage=$2');
    const licenses = await withRefusals(this.audit, found.licenses.items);
    res.status(status).render('licenses/customer', {
      title: `Customer ${names[0] ?? ref.email ?? ref.pib}`,
      nav: 'licenses',
      email: ref.email,
      pib: ref.pib,
      names,
      licenses: refusedAt
        ? byNewestRefusal(licenses, refusedAt).slice((page - 1) * LICENSES_PAGE_SIZE, page * LICENSES_PAGE_SIZE)
        : licenses,
      columns: COLUMNS.map((c) => ({ label: c.label })),
      refusedOnly: Boolean(refusedAt),
      refusedHref: `/licenses/customer?${new URLSearchParams(refusedAt ? params : { ...params, refused: REFUSED_FILTER }).toString()}`,
      machines: found.machines,
      // Each entry's licence names this customer the way it is reached here (e-mail or PIB), with that licence's own name.
      timeline: found.timeline.items.map((e) => ({
        ...e,
        license: e.license ? { ...e.license, customer_email: ref.email, customer_pib: ref.pib } : undefined,
      })),
      timelinePagination: {
        ...timelinePaging,
        prev: tpage(timelinePaging.prev),
        next: tpage(timelinePaging.next),
        label: 'Activity pages',
      },
      notes: found.notes,
      noteMax: CUSTOMER_NOTE_MAX_LENGTH,
      note: form.note ?? '',
      ...summariseErrors(form.errors ?? [], NOTE_LABELS),
      auditLink: `/audit?${new URLSearchParams({ customer: ref.email ?? ref.pib }).toString()}`,
      newLink: '/licenses/new',
      pagination: { ...pagination('/licenses/customer', kept, page, LICENSES_PAGE_SIZE, found.licenses.total), label: 'Licence pages' },
    });
  }
}
