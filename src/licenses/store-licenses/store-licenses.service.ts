import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { Actor } from '../../common/auth/actor';
import type { Product } from '../../products/product.entity';
import { LicenseDetailsDto } from '../dto/license.dto';
import { License } from '../license.entity';
import { computeExpiresAt } from '../license-expiry';
import { licensePolicyOverrides, type PolicyOverrides } from '../../common/seat-policy/license-policy';
import type { LicenseType } from '../license-type';
import { LicenseCreation, type LicenseTerms } from '../license-creation';
import { LicensesRepository } from '../licenses.repository';
import { ChangeLicense } from '../use-cases/change-license';
import type { ChangeableFields } from '../use-cases/license-writer';
import { RevokeLicense, type RevokeOutcome } from '../use-cases/revoke-license';
import type { OnEndAction, StoreName } from './store-names';
import { cutToCodePoints } from '../../common/validation/validators';

/** customer_name's column length, in characters. */
const CUSTOMER_NAME_MAX_CHARS = 200;

/** What a store plan gives a licence (docs/stores.md, Plans), resolved against its product. */
export interface PlanTerms {
  product: Product;
  licenseType: LicenseType;
  limits: Record<string, number>;
  /** null: every feature the product offers. */
  features: string[] | null;
  policy: PolicyOverrides;
  graceDays: number;
  /** Copies bought: above 1 multiplies max_installations. */
  quantity: number;
}

export interface StorePurchase {
  store: StoreName;
  customerName: string;
  customerEmail: string | null;
  customerId: string | null;
  subscriptionId: string | null;
  orderId: string | null;
  /** The paid period's end for a subscription; null: per license_type from now. */
  periodEnd: Date | null;
}

/**
 * The licence use cases of store events (docs/stores.md, What each event does): a store's purchase creates through
 * LicenseCreation, its other events change through ChangeLicense and revoke through RevokeLicense, the same use cases
 * staff's doors call (docs/architecture.md, Licence use cases). Each runs in the caller's transaction (the store event's).
 */
@Injectable()
export class StoreLicensesService {
  constructor(
    private readonly licenses: LicensesRepository,
    private readonly creation: LicenseCreation,
    private readonly changes: ChangeLicense,
    private readonly revoking: RevokeLicense,
  ) {}

  /** The licence of a store subscription, locked for the rest of the transaction; null when none exists. */
  lockBySubscription(store: StoreName, subscriptionId: string, manager: EntityManager): Promise<License | null> {
    return this.licenses.lockByStoreSubscription(store, subscriptionId, manager);
  }

  /** The licence a store order made, locked; null when none exists. */
  lockByOrder(store: StoreName, orderId: string, manager: EntityManager): Promise<License | null> {
    return this.licenses.lockByStoreOrder(store, orderId, manager);
  }

  lockById(id: number, manager: EntityManager): Promise<License | null> {
    return this.licenses.lockById(id, manager);
  }

  /** A new licence from a plan for the buyer, created like every licence (LicenseCreation); the key is always mailed. */
  async purchase(manager: EntityManager, terms: PlanTerms, buyer: StorePurchase, actor: Actor): Promise<License> {
    const now = new Date();
    const expiresAt = terms.licenseType === 'PERPETUAL' ? null : (buyer.periodEnd ?? computeExpiresAt(terms.licenseType, now));
    const licenseTerms: LicenseTerms = {
      product: terms.product,
      licenseType: terms.licenseType,
      // A buyer's name longer than the column holds is cut, never split inside a character (docs/stores.md, Plans).
      customerName: cutToCodePoints(buyer.customerName, CUSTOMER_NAME_MAX_CHARS),
      customerEmail: buyer.customerEmail,
      customerPib: null,
      limits: planLimits(terms),
      features: terms.features ?? [...terms.product.availableFeatures],
      policy: licensePolicyOverrides(terms.policy),
      graceDays: terms.graceDays,
      notes: null,
      expiresAt,
      storeName: buyer.store,
      storeCustomerId: buyer.customerId,
      storeSubscriptionId: buyer.subscriptionId,
      storeOrderId: buyer.orderId,
    };
    return this.creation.create(manager, licenseTerms, actor, true, now);
  }

  /**
   * expires_at becomes the new period's end (a store that names none: the licence's license_type from the period
   * start); a licence the store suspended through on_end is active again. A renewal is a live subscription again
   * (a store that resumes one), so expiry reminders stop again.
   */
  renew(
    manager: EntityManager,
    license: License,
    period: { start: Date | null; end: Date | null },
    reinstate: boolean,
    actor: Actor,
  ): Promise<LicenseDetailsDto> {
    const expiresAt = period.end ?? computeExpiresAt(license.licenseType, period.start ?? new Date());
    return this.change(
      manager,
      license,
      actor,
      { expiresAt, storeSubscriptionEndedAt: null, ...(reinstate ? { active: true } : {}) },
      { renewed: true },
    );
  }

  /** The subscription an order's licence was bought with, told apart from the order: it now expires with the subscription. */
  async attachSubscription(
    manager: EntityManager,
    license: License,
    subscriptionId: string,
    periodEnd: Date | null,
    actor: Actor,
  ): Promise<LicenseDetailsDto> {
    // Recorded like any change, also when no expiry moves (docs/webhooks.md, The event spine).
    const expiresAt = license.licenseType === 'PERPETUAL' ? null : periodEnd;
    return this.change(
      manager,
      license,
      actor,
      { storeSubscriptionId: subscriptionId, ...(expiresAt ? { expiresAt } : {}) },
      { subscription_id: subscriptionId },
    );
  }

  /**
   * Same key, the new plan's limits, features and policy; expires_at moves to the end of the period the store now
   * bills when it names one (docs/stores.md, Plan changes).
   */
  changePlan(
    manager: EntityManager,
    license: License,
    terms: PlanTerms,
    actor: Actor,
    periodEnd: Date | null = null,
  ): Promise<LicenseDetailsDto> {
    return this.change(manager, license, actor, {
      ...(periodEnd && terms.licenseType !== 'PERPETUAL' ? { expiresAt: periodEnd } : {}),
      licenseType: terms.licenseType,
      limits: planLimits(terms),
      features: terms.features ?? [...terms.product.availableFeatures],
      policy: licensePolicyOverrides(terms.policy),
      graceDays: terms.graceDays,
    });
  }

  /** The plan's on_end: expire at the end time (grace applies), suspend, or revoke. */
  async end(manager: EntityManager, license: License, onEnd: OnEndAction, endedAt: Date, actor: Actor): Promise<LicenseDetailsDto> {
    // From here the subscription no longer renews: expiry reminders go out again (docs/mail.md, Stores).
    const ended = { storeSubscriptionEndedAt: endedAt };
    if (onEnd === 'revoke') {
      Object.assign(license, ended);
      return (await this.revoke(manager, license, 'subscription ended', actor)).license;
    }
    if (onEnd === 'suspend') return this.change(manager, license, actor, { active: false, ...ended }, { on_end: onEnd });
    return this.change(manager, license, actor, { expiresAt: endedAt, ...ended }, { on_end: onEnd });
  }

  /**
   * Revokes like staff do (RevokeLicense): a licence revoked already is left as it is, with no second event, and the
   * outcome says so; the store event is then processed with that note (docs/stores.md, The ledger).
   */
  revoke(manager: EntityManager, license: License, reason: string, actor: Actor): Promise<RevokeOutcome> {
    return this.revoking.revokeIn(manager, license, reason, actor);
  }

  /** A refund of a renewal: expires_at back to the start of the refunded period. */
  refundRenewal(manager: EntityManager, license: License, periodStart: Date, actor: Actor): Promise<LicenseDetailsDto> {
    return this.change(manager, license, actor, { expiresAt: periodStart }, { refunded: true });
  }

  private async change(
    manager: EntityManager,
    license: License,
    actor: Actor,
    next: Partial<ChangeableFields>,
    extra: Record<string, unknown> = {},
  ): Promise<LicenseDetailsDto> {
    return (await this.changes.applyIn(manager, license, next, actor, extra)).license;
  }
}

const MAX_LIMIT = 2_147_483_647;

/** The plan's limits; a quantity above 1 multiplies max_installations (the plan's, else the product's, else 1). */
export function planLimits(terms: Pick<PlanTerms, 'limits' | 'product' | 'quantity'>): Record<string, number> {
  const quantity = Math.floor(terms.quantity);
  if (!(quantity > 1)) return { ...terms.limits };
  const seats = terms.limits.max_installations ?? terms.product.defaultLimits.max_installations ?? 1;
  // Limits are read as PostgreSQL int: a huge quantity stops at its maximum instead of breaking every activation.
  return { ...terms.limits, max_installations: Math.min(seats * quantity, MAX_LIMIT) };
}
