import { Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { type Actor, type ActorType, ALL_PRODUCTS, type ProductScope } from '../../common/auth/actor';
import { AppError } from '../../common/errors/app-error';
import { JobsService } from '../../jobs/jobs.service';
import { BulkCounts, BulkOperationRow, BulkOperationsRepository, BulkSkippedRow } from './bulk-operations.repository';
import type { BulkAction, BulkChangeInput } from './bulk-change.input';
import { LicenseListQuery, LicensesService } from '../licenses.service';

/** Up to this many licences a bulk change runs in the request; more run as a job with a progress view. */
export const BULK_INLINE_LIMIT = 100;
/** The most licences one bulk operation covers. */
export const BULK_MAX = 100_000;
export const BULK_QUEUE = 'licenses.bulk';
/** Pending items read per query while an operation runs (each licence is still its own transaction). */
const BULK_BATCH = 100;
/** The job that backs an operation run in the request waits this long, so the request normally finishes it first. */
const INLINE_BACKSTOP_SECONDS = 60;

/** The licences a bulk change covers: ids picked in the list, or everything the list's filters match. */
export type BulkSelection = { ids: readonly number[] } | { query: Omit<LicenseListQuery, 'limit' | 'offset'> };

export interface BulkOperationView {
  id: string;
  action: BulkAction;
  days: number | null;
  reason: string | null;
  total: number;
  actor: string | null;
  created_at: Date;
  finished_at: Date | null;
  counts: BulkCounts;
}

/** A refusal that is not an error: the licence is already as asked. */
class AlreadyDone extends Error {}

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
        },
        ids,
        manager,
      );
      await this.jobs.send(
        BULK_QUEUE,
        { operation_id: id },
        { manager, ...(ranInline ? { startAfterSeconds: INLINE_BACKSTOP_SECONDS } : {}) },
      );
      return id;
    });
    if (ranInline) await this.run(id);
    return { id, total: ids.length, ranInline };
  }

  /** Works the operation's pending items in licence id order until none is left, then records the end. */
  async run(id: string): Promise<void> {
    const operation = await this.operations.get(id);
    if (!operation) return;
    const actor: Actor = { type: operation.actor_type as ActorType, name: operation.actor, ip: operation.actor_ip };
    for (let after = 0; ;) {
      const batch = await this.operations.pending(id, after, BULK_BATCH);
      if (batch.length === 0) break;
      for (const licenseId of batch) await this.applyOne(operation, licenseId, actor);
      after = batch[batch.length - 1];
    }
    await this.operations.finishIfDone(id);
  }

  async get(id: string): Promise<BulkOperationView> {
    const row = /^\d{1,18}$/.test(id) ? await this.operations.get(id) : null;
    if (!row) throw AppError.notFound('Bulk operation');
    return view(row, await this.operations.counts(id));
  }

  /** The skipped licences of an operation with why, at most `limit`. */
  skipped(id: string, limit: number): Promise<BulkSkippedRow[]> {
    return this.operations.skipped(id, limit);
  }

  async recent(limit: number): Promise<BulkOperationView[]> {
    return (await this.operations.recent(limit)).map((r) => view(r, { done: r.done, skipped: r.skipped, pending: r.pending }));
  }

  private async applyOne(operation: BulkOperationRow, licenseId: number, actor: Actor): Promise<void> {
    const scope = operation.product_scope;
    const extra = { bulk_operation: Number(operation.id) };
    try {
      await this.dataSource.transaction(async (manager) => {
        if (!(await this.operations.claim(operation.id, licenseId, manager))) return;
        switch (operation.action as BulkAction) {
          case 'renew':
            await this.licenses.renewIn(manager, licenseId, actor, scope, extra);
            break;
          case 'extend':
            await this.licenses.extendIn(manager, licenseId, operation.days ?? 0, actor, scope, extra);
            break;
          case 'suspend':
            if (!(await this.licenses.suspendIn(manager, licenseId, operation.reason, actor, scope, extra))) {
              throw new AlreadyDone('The licence is already suspended');
            }
            break;
        }
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

function view(row: BulkOperationRow, counts: BulkCounts): BulkOperationView {
  return {
    id: row.id,
    action: row.action as BulkAction,
    days: row.days,
    reason: row.reason,
    total: row.total,
    actor: row.actor,
    created_at: row.created_at,
    finished_at: row.finished_at,
    counts,
  };
}
