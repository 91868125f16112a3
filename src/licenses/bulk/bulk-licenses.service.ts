import { Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { type Actor, ALL_PRODUCTS, type ProductScope } from '../../common/auth/actor';
import type { ActorType } from '../../common/event-vocabulary';
import { AppError } from '../../common/errors/app-error';
import { uniqueViolation } from '../../common/errors/database-errors';
import { JobsService } from '../../jobs/jobs.service';
import { BulkCounts, BulkOperationRow, BulkOperationsRepository, BulkSkippedRow } from './bulk-operations.repository';
import type { BulkAction, BulkChangeInput } from './bulk-change.input';
import { LicenseListQuery, LicensesService } from '../licenses.service';
import { ExtendLicense } from '../use-cases/extend-license';
import { expiryUndoRefusal, type LicenseState, movedExpiry, REVOKED_NOT_SUSPENDED, suspendUndoRefusal } from '../use-cases/license-rules';
import { SuspendLicense } from '../use-cases/suspend-license';
import { UndoLicenseChange } from '../use-cases/undo-license-change';

/** Up to this many licences a bulk change runs in the request; more run as a job with a progress view. */
export const BULK_INLINE_LIMIT = 100;
/** The most licences one bulk operation covers. */
export const BULK_MAX = 100_000;
export const BULK_QUEUE = 'licenses.bulk';
/** Pending items read per query while an operation runs (each licence is still its own transaction). */
const BULK_BATCH = 100;
/** The job that backs an operation run in the request waits this long, so the request normally finishes it first. */
const INLINE_BACKSTOP_SECONDS = 60;

/** What an operation does: a change staff chose, or the undo of an earlier operation. */
export type OperationAction = BulkAction | 'undo';

/** The operations an undo can move back (docs/dashboard.md, Bulk actions): expiry changes and suspensions. */
const UNDOABLE: readonly string[] = ['renew', 'extend', 'suspend'] satisfies BulkAction[];

const ALREADY_SUSPENDED = 'The licence is already suspended';

/** One licence of a confirmation page's preview: as it is, and what the change makes of it, or why it is skipped. */
export interface BulkPreview {
  expires_at: Date | null;
  active: boolean;
  /** The expiry after the change (renew, extend, the undo of either); null for a suspension or a skipped licence. */
  next_expires_at: Date | null;
  skip: string | null;
}

/** The licences a bulk change covers: ids picked in the list, or everything the list's filters match. */
export type BulkSelection = { ids: readonly number[] } | { query: Omit<LicenseListQuery, 'limit' | 'offset'> };

export interface BulkOperationView {
  id: string;
  action: OperationAction;
  days: number | null;
  reason: string | null;
  total: number;
  actor: string | null;
  created_at: Date;
  finished_at: Date | null;
  counts: BulkCounts;
  /** undo: the operation it moved back. */
  undo_of: string | null;
}

/** A refusal that is not an error: the licence is already as asked, or an undo finds nothing kept to go back to. */
class AlreadyDone extends Error {}

const UNDO_GONE = 'Nothing was kept of this licence before the change: it cannot be moved back';

/**
 * Changes many licences at once (docs/dashboard.md, Bulk actions): renew, extend by N days, suspend with a reason.
 * Every licence changes in its own transaction with its own audit entry and events, exactly as the single action
 * does, and in that transaction its item is marked done: a retried job, a second instance or the request and the
 * job together never change a licence twice. What cannot be changed (a PERPETUAL licence to renew, a revoked one)
 * is skipped with the service's own reason.
 */
@Injectable()
export class BulkLicensesService implements OnModuleInit {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly licenses: LicensesService,
    private readonly extend: ExtendLicense,
    private readonly suspend: SuspendLicense,
    private readonly undoes: UndoLicenseChange,
    private readonly operations: BulkOperationsRepository,
    private readonly jobs: JobsService,
  ) {}

  onModuleInit(): void {
    this.jobs.work<{ operation_id: string }>(BULK_QUEUE, (data) => this.run(String(data.operation_id)), {
      pollingIntervalSeconds: 1,
      expireInSeconds: 3600,
      retryLimit: 5,
    });
  }

  /**
   * Records the operation with one pending item per licence and its job in one transaction, then runs it here when it
   * covers at most BULK_INLINE_LIMIT licences (the job, delayed, finishes what a failed request left). 400 when the
   * selection is empty or larger than BULK_MAX.
   */
  async start(
    change: BulkChangeInput,
    selection: BulkSelection,
    actor: Actor,
    products: ProductScope = ALL_PRODUCTS,
  ): Promise<{ id: string; total: number; ranInline: boolean }> {
    const ids = await this.licenses.bulkSelection(selection, BULK_MAX + 1, products);
    if (ids.length === 0) throw AppError.field('selection', 'No licence is selected: pick at least one');
    if (ids.length > BULK_MAX) throw AppError.field('selection', `At most ${BULK_MAX} licences change at once: narrow the filters`);
    const ranInline = ids.length <= BULK_INLINE_LIMIT;
    const id = await this.dataSource.transaction(async (manager) => {
      const id = await this.operations.insert(
        {
          action: change.action,
          days: change.action === 'extend' ? (change.days ?? null) : null,
          reason: change.action === 'suspend' ? change.reason || null : null,
          product_scope: products === null ? null : [...products],
          actor_type: actor.type,
          actor: actor.name,
          actor_ip: actor.ip,
          undo_of: null,
        },
        ids,
        manager,
      );
      await this.queue(id, ranInline, manager);
      return id;
    });
    if (ranInline) await this.run(id);
    return { id, total: ids.length, ranInline };
  }

  /**
   * Starts the undo of a finished operation (docs/dashboard.md, Bulk actions, Undo): a new operation over exactly the
   * licences it changed, each moved back to what its item kept, run like any other (inline up to BULK_INLINE_LIMIT).
   * 404 for an unknown operation; 409 for an undo, a running operation, one that changed nothing, or one already undone
   * (the unique undo_of: two undo requests at once start one undo).
   */
  async undo(id: string, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<{ id: string; total: number; ranInline: boolean }> {
    const original = await this.find(id);
    this.checkUndoable(original, await this.operations.undoneBy(original.id));
    try {
      const started = await this.dataSource.transaction(async (manager) => {
        const ids = await this.operations.changedIds(original.id, null, manager);
        if (ids.length === 0) throw AppError.conflict('Nothing to undo: the operation changed no licence');
        const undoId = await this.operations.insert(
          {
            action: 'undo',
            days: null,
            reason: null,
            product_scope: products === null ? null : [...products],
            actor_type: actor.type,
            actor: actor.name,
            actor_ip: actor.ip,
            undo_of: original.id,
          },
          ids,
          manager,
        );
        await this.queue(undoId, ids.length <= BULK_INLINE_LIMIT, manager);
        return { id: undoId, total: ids.length, ranInline: ids.length <= BULK_INLINE_LIMIT };
      });
      if (started.ranInline) await this.run(started.id);
      return started;
    } catch (err) {
      if (uniqueViolation(err) === 'license_bulk_operations_undo_of_key') throw alreadyUndone(await this.operations.undoneBy(original.id));
      throw err;
    }
  }

  /** Why this operation cannot be undone now (an AppError), or nothing: for the page's Undo button and the undo itself. */
  undoRefusal(operation: BulkOperationView, undoneBy: string | null): AppError | null {
    try {
      this.checkUndoable(operation, undoneBy);
      return operation.counts.done === 0 ? AppError.conflict('Nothing to undo: the operation changed no licence') : null;
    } catch (err) {
      if (err instanceof AppError) return err;
      throw err;
    }
  }

  /** The first licences an operation changed (its undo's preview). */
  changedSample(id: string, limit: number): Promise<number[]> {
    return this.operations.changedIds(id, limit);
  }

  /** These licences as they are, for a confirmation page that does not know the change yet (extend before the days). */
  async current(ids: readonly number[], products: ProductScope = ALL_PRODUCTS): Promise<Map<number, BulkPreview>> {
    const states = await this.licenses.licenseStates(ids, products);
    return new Map([...states].map(([id, s]) => [id, { expires_at: s.expiresAt, active: s.active, next_expires_at: null, skip: null }]));
  }

  /** The operation that undid this one, if any. */
  undoneBy(id: string): Promise<string | null> {
    return this.operations.undoneBy(id);
  }

  /**
   * What the change would make of these licences now, by the same rules that will apply it (the service's own functions),
   * changing nothing: for the confirmation pages. `change` is a bulk change, or the undo of `undoOf`.
   */
  async preview(
    change: { action: BulkAction; days?: number } | { undoOf: BulkOperationView },
    ids: readonly number[],
    products: ProductScope = ALL_PRODUCTS,
  ): Promise<Map<number, BulkPreview>> {
    const states = await this.licenses.licenseStates(ids, products);
    const kept = 'undoOf' in change ? await this.operations.changes(change.undoOf.id, ids) : null;
    const now = new Date();
    const out = new Map<number, BulkPreview>();
    for (const [id, state] of states) {
      const base = { expires_at: state.expiresAt, active: state.active, next_expires_at: null, skip: null };
      try {
        if ('undoOf' in change) {
          const item = kept?.get(id);
          if (!item) throw new AlreadyDone(UNDO_GONE);
          const refusal =
            change.undoOf.action === 'suspend' ? suspendUndoRefusal(state) : expiryUndoRefusal(state, item.new_expires_at as Date);
          if (refusal) throw new AlreadyDone(refusal);
          out.set(id, { ...base, next_expires_at: change.undoOf.action === 'suspend' ? state.expiresAt : item.previous_expires_at });
        } else if (change.action === 'suspend') {
          const refusal = suspendRefusal(state);
          if (refusal) throw new AlreadyDone(refusal);
          out.set(id, base);
        } else {
          const move = change.action === 'renew' ? { renew: true as const } : { days: change.days ?? 0 };
          out.set(id, { ...base, next_expires_at: movedExpiry(state, move, now) });
        }
      } catch (err) {
        if (!(err instanceof AlreadyDone || (err instanceof AppError && err.status < 500))) throw err;
        out.set(id, { ...base, skip: err.message });
      }
    }
    return out;
  }

  private checkUndoable(operation: Pick<BulkOperationRow, 'id' | 'action' | 'finished_at'>, undoneBy: string | null): void {
    if (!UNDOABLE.includes(operation.action)) throw AppError.conflict('An undo cannot be undone: make the change again instead');
    if (undoneBy) throw alreadyUndone(undoneBy);
    if (operation.finished_at === null) throw AppError.conflict('The operation is still running: undo it once it has finished');
  }

  /** The job that runs (or backs) an operation, in the transaction that records it. */
  private queue(id: string, ranInline: boolean, manager: EntityManager): Promise<unknown> {
    return this.jobs.send(
      BULK_QUEUE,
      { operation_id: id },
      { manager, ...(ranInline ? { startAfterSeconds: INLINE_BACKSTOP_SECONDS } : {}) },
    );
  }

  private async find(id: string): Promise<BulkOperationRow> {
    const row = /^\d{1,18}$/.test(id) ? await this.operations.get(id) : null;
    if (!row) throw AppError.notFound('Bulk operation');
    return row;
  }

  /** Works the operation's pending items in licence id order until none is left, then records the end. */
  async run(id: string): Promise<void> {
    const operation = await this.operations.get(id);
    if (!operation) return;
    const original = operation.undo_of ? await this.operations.get(operation.undo_of) : null;
    const actor: Actor = { type: operation.actor_type as ActorType, name: operation.actor, ip: operation.actor_ip };
    for (let after = 0; ;) {
      const batch = await this.operations.pending(id, after, BULK_BATCH);
      if (batch.length === 0) break;
      for (const licenseId of batch) await this.applyOne(operation, original, licenseId, actor);
      after = batch[batch.length - 1];
    }
    await this.operations.finishIfDone(id);
  }

  async get(id: string): Promise<BulkOperationView> {
    const row = await this.find(id);
    return view(row, await this.operations.counts(row.id));
  }

  /** The skipped licences of an operation with why, at most `limit`. */
  skipped(id: string, limit: number): Promise<BulkSkippedRow[]> {
    return this.operations.skipped(id, limit);
  }

  async recent(limit: number): Promise<BulkOperationView[]> {
    return (await this.operations.recent(limit)).map((r) => view(r, { done: r.done, skipped: r.skipped, pending: r.pending }));
  }

  /**
   * One licence in its own transaction: the item claimed, the licence locked and kept as it was, changed by the
   * service's own use case (audited with `bulk_operation`, and `undo_of` for an undo), and what the change left kept.
   */
  private async applyOne(operation: BulkOperationRow, original: BulkOperationRow | null, licenseId: number, actor: Actor): Promise<void> {
    const scope = operation.product_scope;
    const extra = { bulk_operation: Number(operation.id), ...(original ? { undo_of: Number(original.id) } : {}) };
    try {
      await this.dataSource.transaction(async (manager) => {
        if (!(await this.operations.claim(operation.id, licenseId, manager))) return;
        const before = await this.licenses.lockedStateIn(manager, licenseId, scope);
        let after: { expires_at: string | null } = { expires_at: before.expiresAt?.toISOString() ?? null };
        switch (operation.action as OperationAction) {
          case 'renew':
            after = await this.extend.renewIn(manager, licenseId, actor, scope, extra);
            break;
          case 'extend':
            after = await this.extend.extendIn(manager, licenseId, operation.days ?? 0, actor, scope, extra);
            break;
          case 'suspend':
            if (!(await this.suspend.suspendIn(manager, licenseId, operation.reason, actor, scope, extra))) {
              throw new AlreadyDone(ALREADY_SUSPENDED);
            }
            break;
          case 'undo': {
            const kept = original ? await this.operations.change(original.id, licenseId, manager) : null;
            if (!original || !kept) throw new AlreadyDone(UNDO_GONE);
            const back =
              original.action === 'suspend'
                ? 'reinstate'
                : { left: kept.new_expires_at as Date, previous: kept.previous_expires_at as Date };
            after = await this.undoes.undoIn(manager, licenseId, back, actor, scope, extra);
            break;
          }
        }
        await this.operations.keep(
          operation.id,
          licenseId,
          {
            previous_expires_at: before.expiresAt,
            previous_active: before.active,
            new_expires_at: after.expires_at === null ? null : new Date(after.expires_at),
          },
          manager,
        );
      });
    } catch (err) {
      // The transaction rolled back (the item is pending again): record why it was skipped.
      if (err instanceof AlreadyDone || (err instanceof AppError && err.status < 500)) {
        return this.operations.skip(operation.id, licenseId, err.message);
      }
      throw err;
    }
  }
}

/** Why a bulk suspension skips a licence: revoked, or already suspended. */
function suspendRefusal(state: LicenseState): string | null {
  if (state.revoked) return REVOKED_NOT_SUSPENDED;
  return state.active ? null : ALREADY_SUSPENDED;
}

const alreadyUndone = (by: string | null) =>
  AppError.conflict(`Already undone by bulk operation ${by ?? ''}`.trim(), by ? { undone_by: Number(by) } : undefined);

function view(row: BulkOperationRow, counts: BulkCounts): BulkOperationView {
  return {
    id: row.id,
    action: row.action as OperationAction,
    days: row.days,
    reason: row.reason,
    total: row.total,
    actor: row.actor,
    created_at: row.created_at,
    finished_at: row.finished_at,
    counts,
    undo_of: row.undo_of,
  };
}
