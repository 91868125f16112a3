import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { Actor } from '../common/auth/actor';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import type { License } from '../licenses/license.entity';
import { computeExpiresAt } from '../licenses/license-expiry';
import type { StoreName } from '../licenses/store-licenses/store-names';
import { type PlanTerms, StoreLicensesService } from '../licenses/store-licenses/store-licenses.service';
import { EventFailed, fromRow, storeActor } from './received-event';
import type { Buyer, IgnoreCode, ReceivedStoreEvent, StoreAction, StoreAdapter, StoreAsk } from './store-action';
import { StoreEvent } from './store-event.entity';
import { StoreEventOutcome, StoreEventsRepository } from './store-events.repository';
import { StorePlan } from './store-plan.entity';
import { StorePlansRepository } from './store-plans.repository';

/** The note of a store event that would revoke a licence revoked already (docs/stores.md, The ledger). */
export const ALREADY_REVOKED_NOTE = 'already revoked: the licence was revoked before this event';

/**
 * What each event does (docs/stores.md, What each event does): the adapter's action applied to the licence aggregate
 * through the licence use cases (StoreLicensesService), with the ledger's rules (out of order, one licence per order,
 * a plan change is another price or quantity, a refund finds what it paid for). StoreEventsService runs it inside each
 * event's savepoint and records the outcome.
 */
@Injectable()
export class StoreEventActions {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly stores: StoreEventsRepository,
    private readonly plans: StorePlansRepository,
    private readonly licenses: StoreLicensesService,
  ) {}

  /** What the event does to the licence aggregate, in the caller's savepoint; EventFailed when it cannot be applied. */
  async decide(
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
      if (license.revoked) return processed(license, 'end', ALREADY_REVOKED_NOTE);
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
      // Staff's revoke answers 409 here; a store's must not fail (its retries would never end): processed, with the note.
      const revoked = await this.licenses.revoke(manager, license, 'refunded', actor);
      return processed(license, 'refund', revoked.outcome === 'already_revoked' ? ALREADY_REVOKED_NOTE : undefined);
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
