import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { EventRecorder } from '../audit/event-recorder';
import type { Actor } from '../common/auth/actor';
import type { Product } from '../products/product.entity';
import { LicenseDetailsDto } from './dto/license.dto';
import { License } from './license.entity';
import { computeExpiresAt } from './license-expiry';
import { generateLicenseKey } from './license-key';
import { licensePolicyOverrides, type PolicyOverrides } from '../common/seat-policy/license-policy';
import type { LicenseType } from './license-type';
import { LicensesRepository } from './licenses.repository';
import { LicensesService, toLicenseDetails } from './licenses.service';
import { SeatsRepository } from './seats.repository';
import type { OnEndAction, StoreName } from './store-names';
import { cutToCodePoints } from '../common/validation/validators';

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
 * The licence use cases of store events (docs/stores.md, What each event does). Each runs in the caller's
 * transaction (the store event's), changes one licence and records its domain event through EventRecorder.
 */
@Injectable()
export class StoreLicensesService {
  constructor(
    private readonly licenses: LicensesRepository,
    private readonly seats: SeatsRepository,
    private readonly events: EventRecorder,
    private readonly licenseChanges: LicensesService,
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

  /** A new licence from a plan for the buyer. */
  async purchase(manager: EntityManager, terms: PlanTerms, buyer: StorePurchase, actor: Actor): Promise<License> {
    const now = new Date();
    const expiresAt = terms.licenseType === 'PERPETUAL' ? null : (buyer.periodEnd ?? computeExpiresAt(terms.licenseType, now));
    const license = await this.licenses.insert(
      {
        productId: terms.product.id,
        licenseKey: generateLicenseKey(terms.product.keyPrefix),
        licenseType: terms.licenseType,
        // A buyer's name longer than the column holds is cut, never split inside a character (docs/stores.md, Buyers).
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
        createdAt: now,
      },
      manager,
    );
    license.product = terms.product;
    await this.events.record(manager, {
      type: 'license.created',
      actor,
      licenseId: license.id,
      productId: terms.product.id,
      productCode: terms.product.code,
      license: toLicenseDetails(license, [], now),
      details: {
        license_type: license.licenseType,
        customer_name: license.customerName,
        expires_at: license.expiresAt?.toISOString() ?? null,
        limits: license.limits,
        features: license.features,
        store: buyer.store,
        subscription_id: buyer.subscriptionId,
      },
    });
    return license;
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
    await this.licenses.setStoreSubscription(license.id, subscriptionId, manager);
    license.storeSubscriptionId = subscriptionId;
    const expiresAt = license.licenseType === 'PERPETUAL' ? null : periodEnd;
    if (!expiresAt) return this.details(license, manager);
    return this.change(manager, license, actor, { expiresAt }, { subscription_id: subscriptionId });
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
      return this.revoke(manager, license, 'subscription ended', actor);
    }
    if (onEnd === 'suspend') return this.change(manager, license, actor, { active: false, ...ended }, { on_end: onEnd });
    return this.change(manager, license, actor, { expiresAt: endedAt, ...ended }, { on_end: onEnd });
  }

  /** A refund of the first payment revokes (reason `refunded`); nothing more when the licence already is. */
  async revoke(manager: EntityManager, license: License, reason: string, actor: Actor): Promise<LicenseDetailsDto> {
    if (license.revoked) return this.details(license, manager);
    license.revoked = true;
    license.revokedAt = new Date();
    license.revokeReason = reason;
    return this.licenseChanges.saveAndRecord(manager, license, actor, { reason }, 'license.revoked');
  }

  /** A refund of a renewal: expires_at back to the start of the refunded period. */
  refundRenewal(manager: EntityManager, license: License, periodStart: Date, actor: Actor): Promise<LicenseDetailsDto> {
    return this.change(manager, license, actor, { expiresAt: periodStart }, { refunded: true });
  }

  private async change(
    manager: EntityManager,
    license: License,
    actor: Actor,
    next: Partial<
      Pick<License, 'expiresAt' | 'active' | 'licenseType' | 'limits' | 'features' | 'policy' | 'graceDays' | 'storeSubscriptionEndedAt'>
    >,
    extra: Record<string, unknown> = {},
  ): Promise<LicenseDetailsDto> {
    const changes: Record<string, { from: unknown; to: unknown }> = {};
    for (const [key, to] of Object.entries(next) as [keyof typeof next, unknown][]) {
      const from = license[key];
      if (JSON.stringify(jsonValue(from)) !== JSON.stringify(jsonValue(to)))
        changes[snake(key)] = { from: jsonValue(from), to: jsonValue(to) };
    }
    if (Object.keys(changes).length === 0) return this.details(license, manager);
    Object.assign(license, next);
    return this.licenseChanges.saveAndRecord(manager, license, actor, { changes, ...extra });
  }

  private async details(license: License, manager: EntityManager): Promise<LicenseDetailsDto> {
    return toLicenseDetails(license, await this.seats.listCurrent(license.id, manager), new Date());
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

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const jsonValue = (value: unknown): unknown => (value instanceof Date ? value.toISOString() : (value ?? null));
