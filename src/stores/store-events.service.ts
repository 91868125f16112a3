import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { Actor } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import { ErrorCode } from '../common/errors/error-codes';
import { DEFAULT_PAGE_LIMIT, Page } from '../common/http/page-query.dto';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import type { License } from '../licenses/license.entity';
import type { StoreName } from '../licenses/store-licenses/store-names';
import { type PlanTerms, StoreLicensesService } from '../licenses/store-licenses/store-licenses.service';
import { StoreEventDto } from './dto/store-event.dto';
import { computeExpiresAt } from '../licenses/license-expiry';
import type { Buyer, ReceivedStoreEvent, StoreAction, StoreAdapter } from './store-action';
import { StoreEvent } from './store-event.entity';
import { StorePlan } from './store-plan.entity';
import { StoreEventFilter, StoreEventOutcome, StoresRepository } from './stores.repository';
import { LemonSqueezyStore } from './lemonsqueezy/lemonsqueezy-store';
import { PaddleStore } from './paddle/paddle-store';
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
    paddle: PaddleStore,
    lemonsqueezy: LemonSqueezyStore,
  ) {
    this.adapters = { stripe, paddle, lemonsqueezy };
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
      if (inserted || row.status === 'failed') await this.process(adapter, row, inserted ? received : fromRow(row, adapter), manager);
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
      await this.process(adapter, row, fromRow(row, adapter), manager);
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
    if (outcome.status !== 'processed') return;
    if ((outcome.action === 'purchase' || outcome.action === 'renewal') && row.subscriptionId)
      await this.applyPending(adapter, await this.stores.pendingOfSubscription(row.store, row.subscriptionId, manager), manager);
    if (outcome.action === 'customer' && row.customerId)
      await this.applyPending(adapter, await this.stores.pendingOfCustomer(row.store, row.customerId, manager), manager);
  }

  /** Events that waited (for their subscription's purchase, or their buyer's e-mail), in the store's time order. */
  private async applyPending(adapter: StoreAdapter, waiting: StoreEvent[], manager: EntityManager): Promise<void> {
    for (const { id } of waiting) {
      // Applying one may have applied the next already (a purchase applies the rest of its subscription).
      const pending = await this.stores.lockEvent(id, manager);
      if (pending?.status === 'pending') await this.process(adapter, pending, fromRow(pending, adapter), manager);
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
    // Always in this order (customer, subscription, then order), so two events never wait for each other.
    if (adapter.purchaseNeedsEmail && row.customerId) await this.stores.lockStoreKey('customer', row.store, row.customerId, manager);
    if (row.subscriptionId) await this.stores.lockStoreKey('subscription', row.store, row.subscriptionId, manager);
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
        return this.purchaseOrRenewal(adapter, row, action, actor, manager);
      case 'plan_change':
      case 'end':
        return this.subscriptionChange(row, action, actor, manager);
      case 'refund':
        return this.refund(row, action, actor, manager);
      case 'customer':
        return { status: 'processed', action: 'customer', error: null, licenseId: null };
    }
  }

  private async purchaseOrRenewal(
    adapter: StoreAdapter,
    row: StoreEvent,
    action: Extract<StoreAction, { kind: 'purchase' | 'renewal' }>,
    actor: Actor,
    manager: EntityManager,
  ): Promise<StoreEventOutcome> {
    // One licence per order, even when a store sends the order and its subscription as two events at once.
    if (action.kind === 'purchase') await this.stores.lockStoreKey('order', row.store, action.orderId, manager);
    const existing = action.subscriptionId ? await this.licenses.lockBySubscription(row.store, action.subscriptionId, manager) : null;
    if (existing) {
      if (action.kind === 'purchase') return processed(existing, 'purchase', 'the subscription has its licence already');
      if (await this.olderThanApplied(row, manager)) return ignored('older than the last event applied to its subscription', existing);
      if (existing.revoked) return processed(existing, 'renewal', 'the licence is revoked: a renewal does not bring it back');
      if (!action.periodEnd && !action.periodStart) throw new EventFailed('The renewal names no period');
      const last = await this.stores.lastActionOn(existing.id, manager);
      const reinstate = !existing.active && last?.action === 'end';
      await this.licenses.renew(manager, existing, { start: action.periodStart, end: action.periodEnd }, reinstate, actor);
      return { ...processed(existing, 'renewal'), periodStart: action.periodStart };
    }
    if (action.kind === 'purchase') {
      const ofOrder = await this.licenses.lockByOrder(row.store, action.orderId, manager);
      if (ofOrder && action.subscriptionId && !ofOrder.storeSubscriptionId) {
        // The order's licence came first; its subscription now says until when it runs.
        await this.licenses.attachSubscription(manager, ofOrder, action.subscriptionId, action.periodEnd, actor);
        const bought = await this.planOfLines(row.store, action.lines, manager);
        return {
          ...processed(ofOrder, 'purchase', 'the licence of its order now follows the subscription'),
          periodStart: action.periodStart,
          priceId: bought?.plan.priceId ?? null,
          quantity: bought?.quantity ?? null,
        };
      }
      if (ofOrder) return processed(ofOrder, 'purchase', 'the order has its licence already');
    }
    // A purchase, or a renewal of a subscription this server has never seen (a store connected with customers).
    const plan = await this.planOfLines(row.store, action.lines, manager);
    if (!plan) return ignored(`no plan for the price ${action.lines.map((l) => l.priceId).join(', ') || '(none)'}`);
    const buyer = await this.buyerOf(adapter, row.store, action.buyer, manager);
    if (!buyer)
      return {
        status: 'pending',
        error: `waiting for the buyer's e-mail (customer ${action.buyer.customerId ?? '(none)'})`,
        licenseId: null,
      };
    const license = await this.licenses.purchase(
      manager,
      terms(plan.plan, plan.quantity),
      {
        store: row.store,
        customerName: buyer.name,
        customerEmail: buyer.email,
        customerId: buyer.customerId,
        subscriptionId: action.subscriptionId,
        orderId: action.orderId,
        periodEnd: action.periodEnd ?? (action.periodStart ? computeExpiresAt(plan.plan.licenseType, action.periodStart) : null),
      },
      actor,
    );
    return { ...processed(license, 'purchase'), periodStart: action.periodStart, priceId: plan.plan.priceId, quantity: plan.quantity };
  }

  /**
   * The buyer with an e-mail, for a store whose purchases may lack it: from the newest customer event of the ledger,
   * else the store's API; null while unknown (the purchase waits pending for a customer event).
   */
  private async buyerOf(adapter: StoreAdapter, store: StoreName, buyer: Buyer, manager: EntityManager): Promise<Buyer | null> {
    if (buyer.email || !adapter.purchaseNeedsEmail) return buyer;
    if (!buyer.customerId) return null;
    const told = await this.stores.lastCustomerEvent(store, buyer.customerId, manager);
    const action = told ? await adapter.toAction(fromRow(told, adapter)) : undefined;
    if (action?.kind === 'customer' && action.buyer.email) return action.buyer;
    if (!adapter.lookupCustomer) return null;
    const customerId = buyer.customerId;
    const looked = await askStore(() => adapter.lookupCustomer!(customerId), "the buyer's e-mail could not be read");
    return looked?.email ? looked : null;
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
    // Stores that send no previous values update a subscription for many reasons: only another price or quantity acts.
    const applied = await this.stores.lastAppliedPrice(row.store, action.subscriptionId, row.id, manager);
    if (applied && applied.priceId === plan.priceId && (applied.quantity ?? 1) === quantity)
      return ignored('the subscription keeps its price and quantity: nothing to change', license);
    await this.licenses.changePlan(manager, license, terms(plan, quantity), actor);
    return { ...processed(license, 'plan_change'), priceId: plan.priceId, quantity };
  }

  private async refund(
    row: StoreEvent,
    action: Extract<StoreAction, { kind: 'refund' }>,
    actor: Actor,
    manager: EntityManager,
  ): Promise<StoreEventOutcome> {
    let paid = await this.stores.paidWith(row.store, action.paymentId, manager, row.id);
    if (!paid && action.otherPaymentId) {
      const other = await askStore(action.otherPaymentId, 'the refunded payment could not be looked up');
      if (other) paid = await this.stores.paidWith(row.store, other, manager, row.id);
    }
    if (!paid || paid.licenseId === null) return ignored(`no purchase or renewal of ours was paid with ${action.paymentId}`);
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

/** A call to the store's API: its failure fails the event (500: the store retries), naming what could not be done. */
async function askStore<T>(call: () => Promise<T>, what: string): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw new EventFailed(`${what} through the store's API: ${err instanceof Error ? err.message : String(err)}`);
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

function fromRow(row: StoreEvent, adapter: StoreAdapter): ReceivedStoreEvent {
  return {
    eventId: row.eventId,
    type: row.type,
    occurredAt: row.occurredAt,
    livemode: adapter.isLive(row.payload),
    subscriptionId: row.subscriptionId,
    paymentId: row.paymentId,
    customerId: row.customerId,
    payload: row.payload,
  };
}
