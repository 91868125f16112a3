import { AuditService } from '../../audit/audit.service';
import { Get, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Actor, ALL_PRODUCTS, CurrentActor, CurrentProductScope, type ProductScope } from '../../common/auth/actor';
import { AppError, FieldError } from '../../common/errors/app-error';
import { sendExport } from '../../common/http/export';
import {
  BULK_INLINE_LIMIT,
  BULK_MAX,
  BulkLicensesService,
  BulkOperationView,
  BulkPreview,
  BulkSelection,
} from '../../licenses/bulk/bulk-licenses.service';
import { BULK_EXTEND_MAX_DAYS, BulkChangeInput, type BulkAction } from '../../licenses/bulk/bulk-change.input';
import { LicensesService } from '../../licenses/licenses.service';
import { checkDto } from '../http/check-dto';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { parseId } from '../../html/ids';
import { asFormBody, FormBody, formList, formText } from '../../html/forms';
import { summariseErrors } from '../http/form-errors';
import { setFlash } from '../http/view-locals';
import { BULK_CHOICES, LIST_VIEW_FIELDS, listSelection } from './license-list';

/** The most rows one page of the list shows, so the most ids a selection names. */
const MAX_SELECTED = 200;
/** Licences named on the confirmation page; the rest are counted. */
const SAMPLE = 10;
const RECENT = 50;
const SKIPPED_SHOWN = 200;
/** The list view's fields a bulk form carries along (filters, page size, sort, page), so Cancel and errors return to it. */
const VIEW_FIELDS = [...LIST_VIEW_FIELDS, 'page'] as const;
const CHANGE_LABELS = { days: 'Days', reason: 'Reason', action: 'Action' };
/** The quick picks beside the days field (docs/dashboard.md, Bulk actions). */
const DAY_PRESETS = [7, 30, 90, 365];
/** An extension longer than a leap year asks once more, naming the days and the new dates. */
const LONG_EXTENSION_DAYS = 366;

const CONSEQUENCES: Record<BulkAction, { title: string; consequence: string; button: string }> = {
  renew: {
    title: 'Renew',
    consequence:
      'Each licence gets one more term of its own type (TRIAL 14 days, MONTHLY 1, QUARTERLY 3, YEARLY 12 months) from the later of now and its expiry. PERPETUAL and revoked licences are skipped.',
    button: 'Renew',
  },
  extend: {
    title: 'Extend',
    consequence:
      'Each licence expires the given number of days later, counted from the later of now and its expiry. PERPETUAL and revoked licences are skipped.',
    button: 'Extend',
  },
  suspend: {
    title: 'Suspend',
    consequence:
      'Each licence stops activating and validating until reinstated; its machines keep their seats. Revoked and already suspended licences are skipped.',
    button: 'Suspend',
  },
};

/** What the form names: ids picked on the page (`scope=selected`) or every licence the view matches (`scope=all`). */
interface FormSelection {
  selection: BulkSelection;
  /** The form fields that name the selection again on the next step. */
  fields: { name: string; value: string }[];
}

/** The view the form came from, as the list's URL. */
function viewHref(body: FormBody): string {
  const params = new URLSearchParams();
  for (const name of VIEW_FIELDS) if (formText(body, name)) params.set(name, formText(body, name));
  const query = params.toString();
  return `/licenses${query ? `?${query}` : ''}`;
}

const viewFields = (body: FormBody) =>
  VIEW_FIELDS.filter((name) => formText(body, name)).map((name) => ({ name, value: formText(body, name) }));

/** The ids of the form: whole numbers of a licence id's range, at most a page's worth; anything else is a 400. */
function selectedIds(body: FormBody): number[] {
  const raw = formList(body, 'ids');
  if (raw.length > MAX_SELECTED)
    throw AppError.field('ids', `At most ${MAX_SELECTED} licences can be picked one by one: choose all matching instead`);
  const ids = raw.map(parseId);
  if (ids.some((id) => id === null)) throw AppError.field('ids', 'ids must be licence ids');
  return [...new Set(ids as number[])];
}

/**
 * Bulk actions on the licence list (docs/dashboard.md, Bulk actions): pick rows (or all matching), choose renew, extend by
 * days, suspend or export, confirm; more than BULK_INLINE_LIMIT licences run as a job with a progress page.
 */
@DashboardController('licenses/bulk')
export class BulkPagesController {
  constructor(
    private readonly bulk: BulkLicensesService,
    private readonly licenses: LicensesService,
    private readonly audit: AuditService,
  ) {}

  /** The list's bar: export at once, or the confirmation page of the change. */
  @Post('confirm')
  async confirm(@Req() req: Request, @Res() res: Response): Promise<void> {
    const body = asFormBody(req.body);
    const action = formText(body, 'action');
    const choice = BULK_CHOICES.find((c) => c.value === action);
    if (!choice) {
      setFlash(req, 'error', 'Choose what to do with the selected licences.');
      return res.redirect(303, viewHref(body));
    }
    const form = await this.readSelection(body);
    if ('ids' in form.selection && form.selection.ids.length === 0) {
      setFlash(req, 'error', 'Select at least one licence, or choose all matching.');
      return res.redirect(303, viewHref(body));
    }
    if (choice.value === 'export') {
      const query = 'ids' in form.selection ? { ids: form.selection.ids } : form.selection.query;
      return sendExport(res, await this.licenses.exportLicenses(query), 'csv', 'licenses');
    }
    if (choice.value !== 'extend') return this.renderConfirm(res, 200, choice.value, form, body, {}, []);
    // A quick pick, or Preview with the days typed: the same page with the days filled in and their new dates.
    const days = formText(body, 'preset') || formText(body, 'days');
    const { errors } = days ? await checkDto(BulkChangeInput, { action: 'extend', days }) : { errors: [] };
    await this.renderConfirm(res, errors.length ? 400 : 200, 'extend', form, body, { days }, errors);
  }

  /** Starts the confirmed change; a refused form comes back with its messages. */
  @Post()
  async start(@Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor): Promise<void> {
    const body = asFormBody(req.body);
    const form = await this.readSelection(body);
    const typed = { action: formText(body, 'action'), days: formText(body, 'days'), reason: formText(body, 'reason') };
    const { value, errors } = await checkDto(BulkChangeInput, {
      action: typed.action,
      ...(typed.days ? { days: typed.days } : {}),
      ...(typed.reason ? { reason: typed.reason } : {}),
    });
    if (!value) {
      if (!Object.hasOwn(CONSEQUENCES, typed.action)) throw AppError.validation(errors);
      const missingDays = typed.action === 'extend' && !typed.days;
      return this.renderConfirm(
        res,
        400,
        typed.action as BulkAction,
        form,
        body,
        typed,
        missingDays ? [{ field: 'days', message: 'Give the number of days' }] : errors,
      );
    }
    if (value.action === 'extend' && (value.days ?? 0) > LONG_EXTENSION_DAYS && formText(body, 'confirm_days') !== String(value.days)) {
      return this.renderConfirm(res, 200, 'extend', form, body, typed, [], true);
    }
    try {
      const started = await this.bulk.start(value, form.selection, actor);
      setFlash(
        req,
        'success',
        started.ranInline
          ? `${CONSEQUENCES[value.action].title}: ${started.total} licence${started.total === 1 ? '' : 's'} processed.`
          : `${CONSEQUENCES[value.action].title}: ${started.total} licences are being processed.`,
      );
      res.redirect(303, `/licenses/bulk/${started.id}`);
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 400) throw err;
      setFlash(req, 'error', err.details?.fields ? (err.details.fields as FieldError[]).map((e) => e.message).join('; ') : err.message);
      res.redirect(303, viewHref(body));
    }
  }

  /** The palette's "Undo the last bulk change" (docs/dashboard.md, Command palette): the newest undoable one's confirmation. */
  @Get('last/undo')
  async lastUndo(@Req() req: Request, @Res() res: Response): Promise<void> {
    for (const operation of await this.bulk.recent(RECENT)) {
      if (!this.bulk.undoRefusal(operation, await this.bulk.undoneBy(operation.id)))
        return res.redirect(303, `/licenses/bulk/${operation.id}/undo`);
    }
    setFlash(req, 'error', 'No recent bulk change can be undone.');
    res.redirect(303, '/licenses/bulk');
  }

  /** The undo's confirmation: what moves back (a preview of the first licences), or why it cannot. */
  @Get(':id/undo')
  async undoForm(@Param('id') id: string, @Res() res: Response, @CurrentProductScope() scope: ProductScope): Promise<void> {
    const operation = await this.bulk.get(id);
    const refusal = this.bulk.undoRefusal(operation, await this.bulk.undoneBy(operation.id));
    const ids = refusal ? [] : await this.bulk.changedSample(operation.id, SAMPLE);
    const what = describe(operation);
    res.status(refusal ? 409 : 200).render('licenses/bulk-undo', {
      title: `Undo: ${what.what}`,
      nav: 'licenses',
      operation: what,
      refusal: refusal?.message,
      ...(await this.previewView({ undoOf: operation }, ids, operation.counts.done, scope)),
      count: operation.counts.done,
      moveBack: operation.action === 'suspend' ? 'reinstated' : 'moved back to the expiry each had before it',
    });
  }

  /** Starts the undo: a new bulk operation over exactly the licences this one changed (docs/dashboard.md, Bulk actions). */
  @Post(':id/undo')
  async undo(
    @Param('id') id: string,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() scope: ProductScope,
  ): Promise<void> {
    try {
      const started = await this.bulk.undo(id, actor, scope);
      setFlash(
        req,
        'success',
        started.ranInline
          ? `Undo: ${started.total} licence${started.total === 1 ? '' : 's'} processed.`
          : `Undo: ${started.total} licences are being processed.`,
      );
      res.redirect(303, `/licenses/bulk/${started.id}`);
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 409) throw err;
      setFlash(req, 'error', err.message);
      res.redirect(303, `/licenses/bulk/${id}`);
    }
  }

  /** The recent bulk operations, newest first. */
  @Get()
  async list(@Res() res: Response): Promise<void> {
    const operations = await this.bulk.recent(RECENT);
    res.render('licenses/bulk-list', { title: 'Bulk operations', nav: 'licenses', operations: operations.map(describe) });
  }

  /** One operation: its progress while it runs, then what was done and what was skipped with why. */
  @Get(':id')
  async show(@Param('id') id: string, @Res() res: Response): Promise<void> {
    const operation = await this.bulk.get(id);
    const skipped = await this.bulk.skipped(operation.id, SKIPPED_SHOWN);
    const summaries = await this.licenses.licenseSummaries(skipped.map((s) => s.license_id));
    const undoneBy = await this.bulk.undoneBy(operation.id);
    res.render('licenses/bulk-show', {
      title: `Bulk operation ${operation.id}`,
      nav: 'licenses',
      operation: describe(operation),
      undoneBy,
      canUndo: !this.bulk.undoRefusal(operation, undoneBy),
      skipped: skipped.map((s) => ({ id: s.license_id, message: s.message, license: summaries.get(s.license_id) })),
      skippedMore: operation.counts.skipped > skipped.length,
    });
  }

  /** The progress block alone (no layout), which the page's script fetches while the operation runs. */
  @Get(':id/progress')
  async progress(@Param('id') id: string, @Res() res: Response): Promise<void> {
    const operation = await this.bulk.get(id);
    res.render('partials/bulk-progress', { layout: false, operation: describe(operation) });
  }

  private async readSelection(body: FormBody): Promise<FormSelection> {
    const view = viewFields(body);
    if (formText(body, 'scope') === 'all') {
      const { value } = await listSelection(
        Object.fromEntries(view.map((f) => [f.name, f.value])),
        { limit: 1, offset: 0 },
        // The bulk pages are for accounts that see every product (docs/dashboard.md, Bulk actions).
        { audit: this.audit, scope: ALL_PRODUCTS },
      );
      const { limit: _limit, offset: _offset, ...query } = value;
      return { selection: { query }, fields: [{ name: 'scope', value: 'all' }, ...view] };
    }
    const ids = selectedIds(body);
    return { selection: { ids }, fields: [...ids.map((id) => ({ name: 'ids', value: String(id) })), ...view] };
  }

  private async renderConfirm(
    res: Response,
    status: number,
    action: BulkAction,
    form: FormSelection,
    body: FormBody,
    typed: { days?: string; reason?: string },
    errors: FieldError[],
    again = false,
  ): Promise<void> {
    const ids = await this.licenses.bulkSelection(form.selection, BULK_MAX + 1);
    const consequence = CONSEQUENCES[action];
    const count = ids.length;
    const days = typed.days ?? '';
    const dayCount = /^\d{1,4}$/.test(days) && !errors.length ? Number(days) : null;
    const heading = again
      ? `Extend ${count} licence${count === 1 ? '' : 's'} by ${dayCount} days?`
      : `${consequence.title} ${count} licence${count === 1 ? '' : 's'}`;
    // Extend without valid days yet: the current expiries only, the new ones once the days are given.
    const change = action === 'extend' && dayCount === null ? null : { action, days: dayCount ?? undefined };
    res.status(status).render('licenses/bulk-confirm', {
      title: heading,
      heading,
      nav: 'licenses',
      consequence: consequence.consequence,
      button: again
        ? `Yes, extend ${count} licence${count === 1 ? '' : 's'} by ${dayCount} days`
        : `${consequence.button} ${count} licence${count === 1 ? '' : 's'}`,
      action,
      count,
      tooMany: count > BULK_MAX,
      max: BULK_MAX,
      asJob: count > BULK_INLINE_LIMIT,
      inlineLimit: BULK_INLINE_LIMIT,
      all: 'query' in form.selection,
      ...(await this.previewView(change, ids.slice(0, SAMPLE), count, ALL_PRODUCTS)),
      fields: form.fields,
      extend: action === 'extend' && !again,
      again,
      longDays: LONG_EXTENSION_DAYS,
      suspend: action === 'suspend',
      days,
      presets: DAY_PRESETS.map((value) => ({ value, current: String(value) === days })),
      maxDays: BULK_EXTEND_MAX_DAYS,
      reason: typed.reason ?? '',
      cancelHref: viewHref(body),
      ...summariseErrors(errors, CHANGE_LABELS),
    });
  }

  /**
   * The preview of the first licences: key, customer, now and after, by the service's own rules (or the current state
   * alone while the change is not known yet), and how many more are not shown.
   */
  private async previewView(
    change: Parameters<BulkLicensesService['preview']>[0] | null,
    ids: number[],
    count: number,
    scope: ProductScope,
  ) {
    const summaries = await this.licenses.licenseSummaries(ids);
    const preview = change ? await this.bulk.preview(change, ids, scope) : await this.bulk.current(ids, scope);
    const suspension = change !== null && ('undoOf' in change ? change.undoOf.action === 'suspend' : change.action === 'suspend');
    return {
      expiryColumns: !suspension,
      changeKnown: change !== null,
      sample: ids
        .filter((id) => summaries.has(id) && preview.has(id))
        .map((id) => ({ id, ...summaries.get(id), ...previewRow(preview.get(id) as BulkPreview, suspension, change) })),
      more: Math.max(0, count - ids.length),
    };
  }
}

/** One preview row's "now" and "after" cells. */
function previewRow(p: BulkPreview, suspension: boolean, change: unknown) {
  const state = (active: boolean) => (active ? 'active' : 'suspended');
  if (suspension) {
    const after = change && typeof change === 'object' && 'undoOf' in change ? 'active' : 'suspended';
    return { nowText: state(p.active), afterText: p.skip ? null : after, skip: p.skip };
  }
  return { now: p.expires_at, after: p.next_expires_at, skip: p.skip };
}

/** An operation as its pages show it: what it does in words, and how far it got. */
function describe(operation: BulkOperationView) {
  const { done, skipped, pending } = operation.counts;
  const what =
    operation.action === 'renew'
      ? 'Renew for one term'
      : operation.action === 'extend'
        ? `Extend by ${operation.days} day${operation.days === 1 ? '' : 's'}`
        : operation.action === 'undo'
          ? `Undo of bulk operation ${operation.undo_of}`
          : `Suspend${operation.reason ? `: “${operation.reason}”` : ''}`;
  return {
    ...operation,
    what,
    processed: done + skipped,
    percent: operation.total ? Math.floor(((done + skipped) * 100) / operation.total) : 100,
    running: pending > 0 || operation.finished_at === null,
  };
}
