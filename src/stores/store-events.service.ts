import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Gauge } from 'prom-client';
import { EventRecorder } from '../events/event-recorder';
import { AppError } from '../common/errors/app-error';
import { ErrorCode } from '../common/errors/error-codes';
import { DEFAULT_PAGE_LIMIT, Page } from '../common/http/page-query.dto';
import { MetricsService } from '../metrics/metrics.service';
import type { StoreName } from '../licenses/store-licenses/store-names';
import { StoreEventDto } from './dto/store-event.dto';
import { EventFailed, fromRow, storeActor } from './received-event';
import type { ReceivedStoreEvent, StoreAdapter, StoreAsk } from './store-action';
import { StoreEvent } from './store-event.entity';
import { StoreEventActions } from './store-event-actions';
import { StoreEventFilter, StoreEventOutcome, StoreEventsRepository } from './store-events.repository';
import { LemonSqueezyStore } from './lemonsqueezy/lemonsqueezy-store';
import { PaddleStore } from './paddle/paddle-store';
import { StripeStore } from './stripe/stripe-store';

/**
 * Thrown inside an event's savepoint when deciding needs the store's API: nothing of the decision is kept, the
 * transaction commits, the call runs outside it, and the event is decided again with the answer (docs/stores.md,
 * Calls to the store's API).
 */
class StoreCallNeeded extends Error {
  constructor(
    readonly key: string,
    readonly call: () => Promise<unknown>,
  ) {
    super(`the store's API is needed (${key})`);
  }
}

/** The answers of the store's API one event got so far, by call. */
type StoreAnswers = Map<string, { value: unknown } | { error: string }>;
/** Most calls to the store's API one event may make (a refund asks one, a Paddle purchase one). */
const MAX_STORE_CALLS = 3;

/**
 * Failed events and ignored ones without a plan: a seller must act on them (docs/stores.md, Needs attention). The moment
 * an event becomes one is told once; the list and the count (NEEDS_ATTENTION) also leave out a NO_PLAN event staff replayed.
 */
export const needsAttention = (e: Pick<StoreEvent, 'status' | 'reasonCode'>) =>
  e.status === 'failed' || (e.status === 'ignored' && e.reasonCode === 'NO_PLAN');

/**
 * The store framework (docs/stores.md, The ledger): each event once, in one transaction with the licence change, its
 * audit entry and domain event; what an event does is StoreEventActions'. The row is inserted first (ON CONFLICT DO NOTHING) and processed under its lock, so a second
 * delivery, even a concurrent one, changes nothing. A call to the store's API never runs inside a transaction: the
 * row commits first, the call runs, and the event is decided again in a short transaction with the answer.
 */
@Injectable()
export class StoreEventsService {
  private readonly logger = new Logger(StoreEventsService.name);
  private readonly adapters: Record<StoreName, StoreAdapter | undefined>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly stores: StoreEventsRepository,
    private readonly actions: StoreEventActions,
    private readonly events: EventRecorder,
    stripe: StripeStore,
    paddle: PaddleStore,
    lemonsqueezy: LemonSqueezyStore,
    metrics: MetricsService,
  ) {
    this.adapters = { stripe, paddle, lemonsqueezy };
    const count = () => this.stores.countNeedingAttention();
    new Gauge({
      name: 'store_events_needing_attention',
      help: 'Store events a seller must act on: failed, or ignored for want of a plan (docs/stores.md, Needs attention)',
      registers: [metrics.registry],
      // Read from the database by every worker of a cluster: the same value, not one to add up.
      aggregator: 'max',
      async collect() {
        this.set(await count());
      },
    });
  }

  /** 404 for a store without its secret; 400 for a bad signature; 500 STORE_EVENT_FAILED once a failed event is stored. */
  async receive(store: StoreName, raw: unknown, signature: string | undefined): Promise<StoreEventDto> {
    const adapter = this.adapters[store];
    if (!adapter?.connected) throw AppError.notFound('Store endpoint');
    const received = adapter.verify(Buffer.isBuffer(raw) ? raw : Buffer.alloc(0), signature);
    const event = await this.decideInRounds(adapter, async (manager, first) => {
      const inserted = first ? await this.stores.insertEventOnce({ store, ...received }, manager) : null;
      if (inserted) return { row: inserted, process: true };
      // A repeat: the first delivery decided (or, concurrently, was deciding: the insert waited for its commit).
      const row = await this.stores.lockEventByStoreId(store, received.eventId, manager);
      if (!row) throw new Error(`store event ${received.eventId}: neither inserted nor found`);
      // The store's retry of a failed event tries it again, as does one of an event left waiting for the store's API;
      // any other repeat changes nothing.
      return { row, process: row.status === 'failed' || awaitingStoreCall(row) };
    });
    if (event.status === 'failed')
      throw new AppError(ErrorCode.STORE_EVENT_FAILED, 500, event.error ?? 'The event failed', {
        id: event.id,
        reason_code: event.reasonCode,
      });
    return StoreEventDto.from(event);
  }

  /** Processes an ignored, pending or failed event again; 409 for a processed one. */
  async replay(id: string): Promise<StoreEventDto> {
    const found = await this.stores.getEvent(id);
    if (!found) throw AppError.notFound('Store event');
    const adapter = this.adapters[found.store];
    if (!adapter) throw AppError.conflict(`No ${found.store} adapter exists yet`);
    const row = await this.decideInRounds(adapter, async (manager, first) => {
      const locked = await this.stores.lockEvent(id, manager);
      if (!locked) throw AppError.notFound('Store event');
      if (locked.status === 'processed' && first) throw AppError.conflict('The event was processed already: a replay would change nothing');
      // Staff looked at it: a NO_PLAN event replayed without a plan no longer needs attention (docs/stores.md, Needs attention).
      if (first) locked.replayedAt = await this.stores.markReplayed(id, manager);
      return { row: locked, process: locked.status !== 'processed' };
    });
    return StoreEventDto.from(row);
  }

  /**
   * Decides an event in short transactions: each round locks its row (`open`) and processes it; when processing
   * needs the store's API, the round commits without a decision, the call runs outside any transaction, and the next
   * round decides with its answer.
   */
  private async decideInRounds(
    adapter: StoreAdapter,
    open: (manager: EntityManager, first: boolean) => Promise<{ row: StoreEvent; process: boolean }>,
  ): Promise<StoreEvent> {
    const answers: StoreAnswers = new Map();
    for (let round = 0; ; round++) {
      const { row, needed } = await this.dataSource.transaction(async (manager) => {
        const opened = await open(manager, round === 0);
        if (!opened.process) return { row: opened.row, needed: undefined };
        const event = fromRow(opened.row, adapter);
        return { row: opened.row, needed: await this.process(adapter, opened.row, event, manager, answers, round < MAX_STORE_CALLS) };
      });
      if (!needed) return row;
      answers.set(needed.key, await settle(needed.key, needed.call));
    }
  }

  /** The dashboard's count of events that need the seller's attention (docs/stores.md, Needs attention). */
  countNeedingAttention(): Promise<number> {
    return this.stores.countNeedingAttention();
  }

  async list(filter: StoreEventFilter, limit = DEFAULT_PAGE_LIMIT, offset = 0): Promise<Page<StoreEventDto>> {
    const { rows, total } = await this.stores.listEvents(filter, limit, offset);
    return { items: rows.map((r) => StoreEventDto.from(r)), total, estimated: false };
  }

  /**
   * Decides the event inside a savepoint and writes the outcome on its row (`row` is updated in place); an outcome
   * that needs a seller's attention is told once, as store_event.needs_attention, in the same transaction. Returns
   * the store call the decision waits for (nothing written), if any; an event applied in passing (`nested`) that
   * needs one simply keeps waiting.
   */
  private async process(
    adapter: StoreAdapter,
    row: StoreEvent,
    event: ReceivedStoreEvent,
    manager: EntityManager,
    answers: StoreAnswers,
    mayCall: boolean,
    nested = false,
  ): Promise<StoreCallNeeded | undefined> {
    const before = { status: row.status, reasonCode: row.reasonCode };
    const ask: StoreAsk = <T>(key: string, call: () => Promise<T>): Promise<T> => {
      const answer = answers.get(key);
      if (answer && 'error' in answer) return Promise.reject(new EventFailed('STORE_API_ERROR', answer.error));
      if (answer) return Promise.resolve(answer.value as T);
      if (!mayCall || nested)
        return Promise.reject(
          nested ? new StoreCallNeeded(key, call) : new EventFailed('STORE_API_ERROR', "Too many calls to the store's API for one event"),
        );
      return Promise.reject(new StoreCallNeeded(key, call));
    };
    await manager.query('SAVEPOINT store_event');
    let outcome: StoreEventOutcome;
    try {
      outcome = await this.actions.decide(adapter, row, event, manager, ask);
      await manager.query('RELEASE SAVEPOINT store_event');
    } catch (err) {
      await manager.query('ROLLBACK TO SAVEPOINT store_event');
      if (err instanceof StoreCallNeeded) return nested ? undefined : err;
      if (!(err instanceof EventFailed)) this.logger.error(`store event ${row.store} ${row.eventId} failed: ${String(err)}`);
      outcome =
        err instanceof EventFailed
          ? { status: 'failed', reasonCode: err.code, error: err.message }
          : { status: 'failed', reasonCode: 'INVALID_PAYLOAD', error: 'The event could not be processed (see the server log)' };
    }
    Object.assign(row, outcome);
    await this.stores.writeOutcome(row.id, outcome, manager);
    if (needsAttention(row) && !needsAttention(before)) await this.tellNeedsAttention(row, manager);
    if (outcome.status !== 'processed') return undefined;
    if ((outcome.action === 'purchase' || outcome.action === 'renewal') && row.subscriptionId)
      await this.applyPending(adapter, await this.stores.pendingOfSubscription(row.store, row.subscriptionId, manager), manager);
    if (outcome.action === 'customer' && row.customerId)
      await this.applyPending(adapter, await this.stores.pendingOfCustomer(row.store, row.customerId, manager), manager);
    return undefined;
  }

  /** store_event.needs_attention (docs/webhooks.md, Event catalogue): about no product, so only endpoints for every product get it. */
  private tellNeedsAttention(row: StoreEvent, manager: EntityManager): Promise<void> {
    return this.events.record(manager, {
      type: 'store_event.needs_attention',
      actor: storeActor(row.store),
      licenseId: row.licenseId,
      details: {
        id: String(row.id),
        store: row.store,
        event_id: row.eventId,
        type: row.type,
        status: row.status,
        reason_code: row.reasonCode,
        error: row.error,
      },
    });
  }

  /** Events that waited (for their subscription's purchase, or their buyer's e-mail), in the store's time order. */
  private async applyPending(adapter: StoreAdapter, waiting: StoreEvent[], manager: EntityManager): Promise<void> {
    for (const { id } of waiting) {
      // Applying one may have applied the next already (a purchase applies the rest of its subscription).
      const pending = await this.stores.lockEvent(id, manager);
      // One that needs the store's API keeps waiting: no call inside this transaction; a replay or retry applies it.
      if (pending?.status === 'pending') await this.process(adapter, pending, fromRow(pending, adapter), manager, new Map(), false, true);
    }
  }
}

/** A call to the store's API, outside any transaction: its failure is the answer (the event then fails with STORE_API_ERROR). */
async function settle(key: string, call: () => Promise<unknown>): Promise<{ value: unknown } | { error: string }> {
  try {
    return { value: await call() };
  } catch (err) {
    return { error: `${key} could not be read through the store's API: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** An event waiting, uncommitted to any decision, for the store's API (its row committed before the call). */
const awaitingStoreCall = (row: StoreEvent) => row.status === 'pending' && row.reasonCode === null;
