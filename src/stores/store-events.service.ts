import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Gauge } from 'prom-client';
import { EventRecorder } from '../events/event-recorder';
import type { Actor } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import { ErrorCode } from '../common/errors/error-codes';
import { DEFAULT_PAGE_LIMIT, Page } from '../common/http/page-query.dto';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { MetricsService } from '../metrics/metrics.service';
import type { License } from '../licenses/license.entity';
import type { StoreName } from '../licenses/store-licenses/store-names';
import { type PlanTerms, StoreLicensesService } from '../licenses/store-licenses/store-licenses.service';
import { StoreEventDto } from './dto/store-event.dto';
import { computeExpiresAt } from '../licenses/license-expiry';
import type { Buyer, FailCode, IgnoreCode, ReceivedStoreEvent, StoreAction, StoreAdapter, StoreAsk } from './store-action';
import { StoreEvent } from './store-event.entity';
import { StorePlan } from './store-plan.entity';
import { StoreEventFilter, StoreEventOutcome, StoreEventsRepository } from './store-events.repository';
import { StorePlansRepository } from './store-plans.repository';
import { LemonSqueezyStore } from './lemonsqueezy/lemonsqueezy-store';
import { PaddleStore } from './paddle/paddle-store';
import { StripeStore } from './stripe/stripe-store';

/** Thrown inside an event's savepoint: the licence change is undone and the event is stored failed with this code and message. */
class EventFailed extends Error {
  constructor(
    readonly code: FailCode,
    message: string,
  ) {
    super(message);
  }
}

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

const storeActor = (store: StoreName): Actor => ({ type: 'store', name: `store:${store}`, ip: null });

/**
 * Failed events and ignored ones without a plan: a seller must act on them (docs/stores.md, Needs attention). The moment
 * an event becomes one is told once; the list and the count (NEEDS_ATTENTION) also leave out a NO_PLAN event staff replayed.
 */
export const needsAttention = (e: Pick<StoreEvent, 'status' | 'reasonCode'>) =>
  e.status === 'failed' || (e.status === 'ignored' && e.reasonCode === 'NO_PLAN');

/**
 * The store framework (docs/stores.md): each event once, in one transaction with the licence change, its audit entry
 * and domain event. The row is inserted first (ON CONFLICT DO NOTHING) and processed under its lock, so a second
 * delivery, even a concurrent one, changes nothing. A call to the store's API never runs inside a transaction: the
 * row commits first, the call runs, and the event is decided again in a short transaction with the answer.
 */
@Injectable()
export class StoreEventsService {
  private readonly logger = new Logger(StoreEventsService.name);
  private readonly adapters: Record<StoreName, StoreAdapter | undefined>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly stores: StoreEventsRepository,
    private readonly plans: StorePlansRepository,
    private readonly licenses: StoreLicensesService,
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
      outcome = await this.decide(adapter, row, event, manager, ask);
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

  private async decide(
    adapter: StoreAdapter,
    row: StoreEvent,
    event: ReceivedStoreEvent,
    manager: EntityManager,
    ask: StoreAsk,
  ): Promise<StoreEventOutcome> {
    const unsupported = adapter.unsupported(event);
    if (unsupported) throw new EventFailed('API_VERSION_MISMATCH', unsupported);
    // Always in this order (customer, subscription, then order), so two events never wait for each other.
    if (adapter.purchaseNeedsEmail && row.customerId) await this.stores.lockStoreKey('customer', row.store, row.customerId, manager);
    if (row.subscriptionId) await this.stores.lockStoreKey('subscription', row.store, row.subscriptionId, manager);
    if (!event.livemode && !this.config.stores?.acceptTestEvents)
      return ignored('TEST_MODE', 'a test-mode event: set STORES_ACCEPT_TEST_EVENTS=true to process test-mode events');
    const action = await adapter.toAction(event, ask);
    const actor = storeActor(row.store);
    switch (action.kind) {
      case 'ignore':
        return ignored(action.code, action.reason);
      case 'fail':
        throw new EventFailed(action.code, action.reason);
      case 'purchase':
      case 'renewal':
        return this.purchaseOrRenewal(adapter, row, action, actor, manager, ask);
      case 'plan_change':
      case 'end':
        return this.subscriptionChange(row, action, actor, manager);
      case 'refund':
        return this.refund(row, action, actor, manager, ask);
      case 'customer':
        return { status: 'processed', reasonCode: null, action: 'customer', error: null, licenseId: null };
    }
  }

  private async purchaseOrRenewal(
    adapter: StoreAdapter,
    row: StoreEvent,
    action: Extract<StoreAction, { kind: 'purchase' | 'renewal' }>,
    actor: Actor,
    manager: EntityManager,
    ask: StoreAsk,
  ): Promise<StoreEventOutcome> {
    // One licence per order, even when a store sends the order and its subscription as two events at once.
    if (action.kind === 'purchase') await this.stores.lockStoreKey('order', row.store, action.orderId, manager);
    const existing = action.subscriptionId ? await this.licenses.lockBySubscription(row.store, action.subscriptionId, manager) : null;
    if (existing) {
      if (action.kind === 'purchase') return processed(existing, 'purchase', 'the subscription has its licence already');
      if (await this.olderThanApplied(row, manager))
        return ignored('OUT_OF_ORDER', 'older than the last event applied to its subscription', existing);
      if (existing.revoked) return processed(existing, 'renewal', 'the licence is revoked: a renewal does not bring it back');
      const period = await this.renewalPeriod(adapter, row, action, manager);
      if (!period) return ignored('NO_PLAN', `no plan for the price ${pricesOf(action.lines)}`, existing);
      if (!period.end && !period.start) throw new EventFailed('INVALID_PAYLOAD', 'The renewal names no period');
      const last = await this.stores.lastActionOn(existing.id, manager);
      const reinstate = !existing.active && last?.action === 'end';
      await this.licenses.renew(manager, existing, period, reinstate, actor);
      return { ...processed(existing, 'renewal'), periodStart: period.start };
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
          quantity: bought ? wholeQuantity(bought.line.quantity) : null,
        };
      }
      if (ofOrder) return processed(ofOrder, 'purchase', 'the order has its licence already');
    }
    // A renewal naming no price (a Lemon Squeezy invoice) of a subscription never seen: its purchase may still come.
    if (action.kind === 'renewal' && action.lines.length === 0)
      return {
        status: 'pending',
        reasonCode: 'UNKNOWN_SUBSCRIPTION',
        error: 'waiting for the purchase of its subscription',
        licenseId: null,
      };
    // A purchase, or a renewal of a subscription this server has never seen (a store connected with customers).
    const bought = await this.planOfLines(row.store, action.lines, manager, action.periodOfPlanLines);
    if (!bought) return ignored('NO_PLAN', `no plan for the price ${pricesOf(action.lines)}`);
    const quantity = wholeQuantity(bought.line.quantity);
    const buyer = await this.buyerOf(adapter, row.store, action.buyer, manager, ask);
    if (!buyer)
      return {
        status: 'pending',
        reasonCode: 'AWAITING_CUSTOMER',
        error: `waiting for the buyer's e-mail (customer ${action.buyer.customerId ?? '(none)'})`,
        licenseId: null,
      };
    const periodStart = action.periodStart ?? bought.line.periodStart ?? null;
    const periodEnd = action.periodEnd ?? (action.periodOfPlanLines ? (bought.line.periodEnd ?? null) : null);
    const license = await this.licenses.purchase(
      manager,
      terms(bought.plan, quantity),
      {
        store: row.store,
        customerName: buyer.name,
        customerEmail: buyer.email,
        customerId: buyer.customerId,
        subscriptionId: action.subscriptionId,
        orderId: action.orderId,
        periodEnd: periodEnd ?? (periodStart ? computeExpiresAt(bought.plan.licenseType, periodStart) : null),
      },
      actor,
    );
    return { ...processed(license, 'purchase'), periodStart, priceId: bought.plan.priceId, quantity };
  }

  /**
   * The period a renewal of a known licence paid for (docs/stores.md, What each event does): the event's own; for a
   * Stripe plan change's invoice, the latest period of its lines whose price has a plan (null: none has one); for a
   * store whose payments name no end (Lemon Squeezy), the subscription's latest known renews_at after the payment,
   * else (end null) one license_type period from the payment.
   */
  private async renewalPeriod(
    adapter: StoreAdapter,
    row: StoreEvent,
    action: Extract<StoreAction, { kind: 'purchase' | 'renewal' }>,
    manager: EntityManager,
  ): Promise<{ start: Date | null; end: Date | null } | null> {
    if (action.periodOfPlanLines) {
      const bought = await this.planOfLines(row.store, action.lines, manager, true);
      return bought?.line.periodEnd ? { start: bought.line.periodStart ?? null, end: bought.line.periodEnd } : null;
    }
    if (action.periodEnd || !adapter.renewsAt || !action.subscriptionId) return { start: action.periodStart, end: action.periodEnd };
    let end: Date | null = null;
    for (const payload of await this.stores.subscriptionPayloads(row.store, action.subscriptionId, manager)) {
      const renewsAt = adapter.renewsAt(payload);
      if (renewsAt && (!end || renewsAt > end)) end = renewsAt;
    }
    const paidAt = action.periodStart ?? row.occurredAt;
    return { start: action.periodStart, end: end && (!paidAt || end > paidAt) ? end : null };
  }

  /**
   * The buyer with an e-mail, for a store whose purchases may lack it: from the newest customer event of the ledger,
   * else the store's API; null while unknown (the purchase waits pending for a customer event).
   */
  private async buyerOf(
    adapter: StoreAdapter,
    store: StoreName,
    buyer: Buyer,
    manager: EntityManager,
    ask: StoreAsk,
  ): Promise<Buyer | null> {
    if (buyer.email || !adapter.purchaseNeedsEmail) return buyer;
    if (!buyer.customerId) return null;
    const told = await this.stores.lastCustomerEvent(store, buyer.customerId, manager);
    const action = told ? await adapter.toAction(fromRow(told, adapter), ask) : undefined;
    if (action?.kind === 'customer' && action.buyer.email) return action.buyer;
    if (!adapter.lookupCustomer || !adapter.canLookupCustomer?.(buyer.customerId)) return null;
    const customerId = buyer.customerId;
    const looked = await ask(`the buyer's e-mail (customer ${customerId})`, () => adapter.lookupCustomer!(customerId));
    return looked?.email ? looked : null;
  }

  private async subscriptionChange(
    row: StoreEvent,
    action: Extract<StoreAction, { kind: 'plan_change' | 'end' }>,
    actor: Actor,
    manager: EntityManager,
  ): Promise<StoreEventOutcome> {
    const license = await this.licenses.lockBySubscription(row.store, action.subscriptionId, manager);
    if (!license)
      return {
        status: 'pending',
        reasonCode: 'UNKNOWN_SUBSCRIPTION',
        error: 'waiting for the purchase of its subscription',
        licenseId: null,
      };
    if (await this.olderThanApplied(row, manager))
      return ignored('OUT_OF_ORDER', 'older than the last event applied to its subscription', license);
    const plan = action.priceId ? await this.plans.planForPrice(row.store, action.priceId, manager) : null;
    if (action.kind === 'end') {
      if (license.revoked) return processed(license, 'end', 'the licence is revoked already');
      // A deleted plan leaves its licences: they end as `expire` does.
      await this.licenses.end(manager, license, plan?.onEnd ?? 'expire', action.endedAt, actor);
      return processed(license, 'end');
    }
    if (!plan) return ignored('NO_PLAN', `no plan for the price ${action.priceId ?? '(none)'}`, license);
    if (plan.productId !== license.productId)
      throw new EventFailed(
        'OTHER_PRODUCT',
        `the plan of price ${plan.priceId} is for product ${plan.product?.code ?? plan.productId}, the licence for ${license.product?.code ?? license.productId}`,
      );
    const quantity = wholeQuantity(action.quantity);
    // Stores that send no previous values update a subscription for many reasons: only another price or quantity acts.
    const applied = await this.stores.lastAppliedPrice(row.store, action.subscriptionId, row.id, manager);
    if (applied && applied.priceId === plan.priceId && (applied.quantity ?? 1) === quantity)
      return ignored('UNHANDLED_TYPE', 'the subscription keeps its price and quantity: nothing to change', license);
    await this.licenses.changePlan(manager, license, terms(plan, quantity), actor, action.periodEnd);
    return { ...processed(license, 'plan_change'), priceId: plan.priceId, quantity };
  }

  private async refund(
    row: StoreEvent,
    action: Extract<StoreAction, { kind: 'refund' }>,
    actor: Actor,
    manager: EntityManager,
    ask: StoreAsk,
  ): Promise<StoreEventOutcome> {
    let paid = await this.stores.paidWith(row.store, action.payments, action.subscriptionId, manager, row.id);
    if (!paid && action.lookup) {
      // Without the key the refund cannot be matched: failed, so the store retries and the seller sees it, never ignored.
      if (action.lookup.missingKey)
        throw new EventFailed('STORE_API_KEY_MISSING', `${action.lookup.missingKey} is unset: the refunded payment cannot be looked up`);
      const other = await ask(action.lookup.key, action.lookup.call);
      if (other) paid = await this.stores.paidWith(row.store, [other], action.subscriptionId, manager, row.id);
    }
    const named = action.payments.map((p) => `${p.kind} ${p.id}`).join(' or ');
    if (!paid || paid.licenseId === null) return ignored('UNHANDLED_TYPE', `no purchase or renewal of ours was paid with ${named}`);
    const license = await this.licenses.lockById(paid.licenseId, manager);
    if (!license) return ignored('UNHANDLED_TYPE', 'the licence was deleted');
    if (paid.action === 'purchase') {
      if (license.revoked) return processed(license, 'refund', 'the licence is revoked already');
      await this.licenses.revoke(manager, license, 'refunded', actor);
      return processed(license, 'refund');
    }
    if (!paid.periodStart) throw new EventFailed('INVALID_PAYLOAD', 'The refunded renewal has no period start');
    await this.licenses.refundRenewal(manager, license, paid.periodStart, actor);
    return processed(license, 'refund');
  }

  /** Whether a newer event of the same subscription was applied already (an older one then changes nothing; one as old applies). */
  private async olderThanApplied(row: StoreEvent, manager: EntityManager): Promise<boolean> {
    if (!row.subscriptionId || !row.occurredAt) return false;
    const last = await this.stores.lastAppliedAt(row.store, row.subscriptionId, row.id, manager);
    return last !== null && last.getTime() > row.occurredAt.getTime();
  }

  /**
   * The first line whose price has a plan; with `latest`, the plan line whose period ends last (a plan change's
   * invoice lists the old price's proration first: the new price's line runs longest).
   */
  private async planOfLines(
    store: StoreName,
    lines: PurchaseLine[],
    manager: EntityManager,
    latest = false,
  ): Promise<{ plan: StorePlan; line: PurchaseLine } | null> {
    let found: { plan: StorePlan; line: PurchaseLine } | null = null;
    for (const line of lines) {
      if (!line.priceId) continue;
      const plan = await this.plans.planForPrice(store, line.priceId, manager);
      if (!plan) continue;
      if (!latest) return { plan, line };
      if (!found || (line.periodEnd ?? 0) > (found.line.periodEnd ?? 0)) found = { plan, line };
    }
    return found;
  }
}

type PurchaseLine = Extract<StoreAction, { kind: 'purchase' | 'renewal' }>['lines'][number];

const pricesOf = (lines: PurchaseLine[]) => lines.map((l) => l.priceId).join(', ') || '(none)';

/** A call to the store's API, outside any transaction: its failure is the answer (the event then fails with STORE_API_ERROR). */
async function settle(key: string, call: () => Promise<unknown>): Promise<{ value: unknown } | { error: string }> {
  try {
    return { value: await call() };
  } catch (err) {
    return { error: `${key} could not be read through the store's API: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** Most copies one purchase may multiply max_installations by; a quantity above is no real purchase. */
const MAX_QUANTITY = 1_000_000;

/** A quantity a store sent: a whole number from 1 (docs/stores.md, Plans), else the event fails with INVALID_QUANTITY. */
function wholeQuantity(value: unknown): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_QUANTITY) return value;
  throw new EventFailed(
    'INVALID_QUANTITY',
    `The quantity ${JSON.stringify(value) ?? String(value)} is not a whole number from 1 to ${MAX_QUANTITY}`,
  );
}

/** An event waiting, uncommitted to any decision, for the store's API (its row committed before the call). */
const awaitingStoreCall = (row: StoreEvent) => row.status === 'pending' && row.reasonCode === null;

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

const ignored = (reasonCode: IgnoreCode, error: string, license?: License): StoreEventOutcome => ({
  status: 'ignored',
  reasonCode,
  error,
  licenseId: license?.id ?? null,
});
const processed = (license: License, action: string, note?: string): StoreEventOutcome => ({
  status: 'processed',
  reasonCode: null,
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
    paymentKind: row.paymentKind,
    customerId: row.customerId,
    payload: row.payload,
  };
}
