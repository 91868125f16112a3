import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { Actor } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import { ErrorCode } from '../common/errors/error-codes';
import { DEFAULT_PAGE_LIMIT, Page } from '../common/http/page-query.dto';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import type { License } from '../licenses/license.entity';
import type { StoreName } from '../licenses/store-names';
import { type PlanTerms, StoreLicensesService } from '../licenses/store-licenses.service';
import { StoreEventDto } from './dto/store-event.dto';
import type { ReceivedStoreEvent, StoreAction, StoreAdapter } from './store-action';
import { StoreEvent } from './store-event.entity';
import { StorePlan } from './store-plan.entity';
import { StoreEventFilter, StoreEventOutcome, StoresRepository } from './stores.repository';
import { StripeStore } from './stripe/stripe-store';

/** Thrown inside an event's savepoint: the licence change is undone and the event is stored failed with this message. */
class EventFailed extends Error {}

const storeActor = (store: StoreName): Actor => ({ type: 'store', name: `store:${store}`, ip: null });

/**
 * The store framework (docs/stores.md): each event once, in one transaction with the licence change, its audit entry
 * and domain event. The row is inserted first (ON CONFLICT DO NOTHING) and processed under its lock, so a second
 * delivery, even a concurrent one, changes nothing.
 */
@Injectable()
export class StoreEventsService {
  private readonly logger = new Logger(StoreEventsService.name);
  private readonly adapters: Record<StoreName, StoreAdapter | undefined>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly stores: StoresRepository,
    private readonly licenses: StoreLicensesService,
    stripe: StripeStore,
  ) {
    this.adapters = { stripe, paddle: undefined, lemonsqueezy: undefined };
  }

  /** 404 for a store without its secret; 400 for a bad signature; 500 STORE_EVENT_FAILED once a failed event is stored. */
  async receive(store: StoreName, raw: unknown, signature: string | undefined): Promise<StoreEventDto> {
    const adapter = this.adapters[store];
    if (!adapter?.connected) throw AppError.notFound('Store endpoint');
    const received = adapter.verify(Buffer.isBuffer(raw) ? raw : Buffer.alloc(0), signature);
    const event = await this.dataSource.transaction(async (manager) => {
      const inserted = await this.stores.insertEventOnce({ store, ...received }, manager);
      // A repeat: the first delivery decided (or, concurrently, was deciding: the insert waited for its commit).
      const row = inserted ?? (await this.stores.lockEventByStoreId(store, received.eventId, manager));
      if (!row) throw new Error(`store event ${received.eventId}: neither inserted nor found`);
      // The store's retry of a failed event tries it again; any other repeat changes nothing.
      if (inserted || row.status === 'failed') await this.process(adapter, row, inserted ? received : fromRow(row), manager);
      return row;
    });
    if (event.status === 'failed')
      throw new AppError(ErrorCode.STORE_EVENT_FAILED, 500, event.error ?? 'The event failed', { id: event.id });
    return StoreEventDto.from(event);
  }

  /** Processes an ignored, pending or failed event again; 409 for a processed one. */
  async replay(id: string): Promise<StoreEventDto> {
    return this.dataSource.transaction(async (manager) => {
      const row = await this.stores.lockEvent(id, manager);
      if (!row) throw AppError.notFound('Store event');
      if (row.status === 'processed') throw AppError.conflict('The event was processed already: a replay would change nothing');
      const adapter = this.adapters[row.store];
      if (!adapter) throw AppError.conflict(`No ${row.store} adapter exists yet`);
      await this.process(adapter, row, fromRow(row), manager);
      return StoreEventDto.from(row);
    });
  }

  async list(filter: StoreEventFilter, limit = DEFAULT_PAGE_LIMIT, offset = 0): Promise<Page<StoreEventDto>> {
    const { rows, total } = await this.stores.listEvents(filter, limit, offset);
    return { items: rows.map((r) => StoreEventDto.from(r)), total, estimated: false };
  }

  /** Decides the event inside a savepoint and writes the outcome on its row (`row` is updated in place). */
  private async process(adapter: StoreAdapter, row: StoreEvent, event: ReceivedStoreEvent, manager: EntityManager): Promise<void> {
    await manager.query('SAVEPOINT store_event');
    let outcome: StoreEventOutcome;
    try {
      outcome = await this.decide(adapter, row, event, manager);
      await manager.query('RELEASE SAVEPOINT store_event');
    } catch (err) {
      await manager.query('ROLLBACK TO SAVEPOINT store_event');
      if (!(err instanceof EventFailed)) this.logger.error(`store event ${row.store} ${row.eventId} failed: ${String(err)}`);
      outcome = {
        status: 'failed',
        error: err instanceof EventFailed ? err.message : 'The event could not be processed (see the server log)',
      };
    }
    Object.assign(row, outcome);
    await this.stores.writeOutcome(row.id, outcome, manager);
    if (outcome.status === 'processed' && (outcome.action === 'purchase' || outcome.action === 'renewal') && row.subscriptionId)
      await this.applyPending(adapter, row.store, row.subscriptionId, manager);
  }

  /** Events that waited for their subscription's purchase, in the store's time order. */
  private async applyPending(adapter: StoreAdapter, store: StoreName, subscriptionId: string, manager: EntityManager): Promise<void> {
    for (const pending of await this.stores.pendingOfSubscription(store, subscriptionId, manager)) {
      await this.process(adapter, pending, fromRow(pending), manager);
    }
  }

  private async decide(
    adapter: StoreAdapter,
    row: StoreEvent,
    event: ReceivedStoreEvent,
    manager: EntityManager,
  ): Promise<StoreEventOutcome> {
    const unsupported = adapter.unsupported(event);
    if (unsupported) throw new EventFailed(unsupported);
    if (!event.livemode && !this.config.stores?.acceptTestEvents)
      return ignored('a test-mode event: set STORES_ACCEPT_TEST_EVENTS=true to process test-mode events');
    const action = await adapter.toAction(event);
    const actor = storeActor(row.store);
    switch (action.kind) {
      case 'ignore':
        return ignored(action.reason);
      case 'fail':
        throw new EventFailed(action.reason);
      case 'purchase':
      case 'renewal':
        return this.purchaseOrRenewal(row, action, actor, manager);
      case 'plan_change':
      case 'end':
        return this.subscriptionChange(row, action, actor, manager);
      case 'refund':
        return this.refund(row, action.paymentId, actor, manager);
    }
  }

  private async purchaseOrRenewal(
    row: StoreEvent,
    action: Extract<StoreAction, { kind: 'purchase' | 'renewal' }>,
    actor: Actor,
    manager: EntityManager,
  ): Promise<StoreEventOutcome> {
    const existing = action.subscriptionId ? await this.licenses.lockBySubscription(row.store, action.subscriptionId, manager) : null;
    if (existing) {
      if (action.kind === 'purchase') return processed(existing, 'purchase', 'the subscription has its licence already');
      if (await this.olderThanApplied(row, manager)) return ignored('older than the last event applied to its subscription', existing);
      if (existing.revoked) return processed(existing, 'renewal', 'the licence is revoked: a renewal does not bring it back');
      if (!action.periodEnd) throw new EventFailed('The renewal names no period end');
      const last = await this.stores.lastActionOn(existing.id, manager);
      const reinstate = !existing.active && last?.action === 'end';
      await this.licenses.renew(manager, existing, action.periodEnd, reinstate, actor);
      return { ...processed(existing, 'renewal'), periodStart: action.periodStart };
    }
    // A purchase, or a renewal of a subscription this server has never seen (a store connected with customers).
    const plan = await this.planOfLines(row.store, action.lines, manager);
    if (!plan) return ignored(`no plan for the price ${action.lines.map((l) => l.priceId).join(', ') || '(none)'}`);
    const license = await this.licenses.purchase(
      manager,
      terms(plan.plan, plan.quantity),
      {
        store: row.store,
        customerName: action.buyer.name,
        customerEmail: action.buyer.email,
        customerId: action.buyer.customerId,
        subscriptionId: action.subscriptionId,
        orderId: action.orderId,
        periodEnd: action.periodEnd,
      },
      actor,
    );
    return { ...processed(license, 'purchase'), periodStart: action.periodStart };
  }

  private async subscriptionChange(
    row: StoreEvent,
    action: Extract<StoreAction, { kind: 'plan_change' | 'end' }>,
    actor: Actor,
    manager: EntityManager,
  ): Promise<StoreEventOutcome> {
    const license = await this.licenses.lockBySubscription(row.store, action.subscriptionId, manager);
    if (!license) return { status: 'pending', error: 'waiting for the purchase of its subscription', licenseId: null };
    if (await this.olderThanApplied(row, manager)) return ignored('older than the last event applied to its subscription', license);
    const plan = action.priceId ? await this.stores.planForPrice(row.store, action.priceId, manager) : null;
    if (action.kind === 'end') {
      if (license.revoked) return processed(license, 'end', 'the licence is revoked already');
      // A deleted plan leaves its licences: they end as `expire` does.
      await this.licenses.end(manager, license, plan?.onEnd ?? 'expire', action.endedAt, actor);
      return processed(license, 'end');
    }
    if (!plan) return ignored(`no plan for the price ${action.priceId ?? '(none)'}`, license);
    if (plan.productId !== license.productId)
      throw new EventFailed(
        `the plan of price ${plan.priceId} is for product ${plan.product?.code ?? plan.productId}, the licence for ${license.product?.code ?? license.productId}`,
      );
    const quantity = 'quantity' in action ? action.quantity : 1;
    await this.licenses.changePlan(manager, license, terms(plan, quantity), actor);
    return processed(license, 'plan_change');
  }

  private async refund(row: StoreEvent, paymentId: string, actor: Actor, manager: EntityManager): Promise<StoreEventOutcome> {
    const paid = await this.stores.paidWith(row.store, paymentId, manager);
    if (!paid || paid.id === row.id || paid.licenseId === null) return ignored(`no purchase or renewal of ours was paid with ${paymentId}`);
    const license = await this.licenses.lockById(paid.licenseId, manager);
    if (!license) return ignored('the licence was deleted');
    if (paid.action === 'purchase') {
      if (license.revoked) return processed(license, 'refund', 'the licence is revoked already');
      await this.licenses.revoke(manager, license, 'refunded', actor);
      return processed(license, 'refund');
    }
    if (!paid.periodStart) throw new EventFailed('The refunded renewal has no period start');
    await this.licenses.refundRenewal(manager, license, paid.periodStart, actor);
    return processed(license, 'refund');
  }

  /** Whether a newer event of the same subscription was applied already (an older one then changes nothing). */
  private async olderThanApplied(row: StoreEvent, manager: EntityManager): Promise<boolean> {
    if (!row.subscriptionId || !row.occurredAt) return false;
    const last = await this.stores.lastAppliedAt(row.store, row.subscriptionId, row.id, manager);
    return last !== null && last.getTime() > row.occurredAt.getTime();
  }

  private async planOfLines(
    store: StoreName,
    lines: { priceId: string | null; quantity: number }[],
    manager: EntityManager,
  ): Promise<{ plan: StorePlan; quantity: number } | null> {
    for (const line of lines) {
      if (!line.priceId) continue;
      const plan = await this.stores.planForPrice(store, line.priceId, manager);
      if (plan) return { plan, quantity: line.quantity };
    }
    return null;
  }
}

function terms(plan: StorePlan, quantity: number): PlanTerms {
  return {
    product: plan.product as PlanTerms['product'],
    licenseType: plan.licenseType,
    limits: plan.limits,
    features: plan.features,
    policy: plan.policy,
    graceDays: plan.graceDays,
    quantity,
  };
}

const ignored = (error: string, license?: License): StoreEventOutcome => ({ status: 'ignored', error, licenseId: license?.id ?? null });
const processed = (license: License, action: string, note?: string): StoreEventOutcome => ({
  status: 'processed',
  error: note ?? null,
  licenseId: license.id,
  action,
});

function fromRow(row: StoreEvent): ReceivedStoreEvent {
  const payload = row.payload as { livemode?: boolean };
  return {
    eventId: row.eventId,
    type: row.type,
    occurredAt: row.occurredAt,
    livemode: payload.livemode === true,
    subscriptionId: row.subscriptionId,
    paymentId: row.paymentId,
    payload: row.payload,
  };
}
