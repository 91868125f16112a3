import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { Actor } from '../common/auth/actor';
import { type DomainEvent, EventRecorder } from '../events/event-recorder';
import type { Product } from '../products/product.entity';
import type { License } from './license.entity';
import { generateLicenseKey } from './license-key';
import { LicensesRepository, type NewLicense } from './licenses.repository';
import { licenseEvent } from './license-details';
import { apiFields, apiObject, apiTimes } from '../common/http/api-fields';

/** 100 random bits make a collision astronomically rare; a few draws make it harmless. */
const KEY_ATTEMPTS = 5;

/** What a door decides about a new licence: everything but its key and its time. */
export type LicenseTerms = Omit<NewLicense, 'productId' | 'licenseKey' | 'createdAt'> & { product: Product };

/**
 * The details of a licence's creation, the same shape from every door (the admin API, the dashboard, a store, a trial):
 * docs/webhooks.md, Event catalogue. `notify_customer`: the key is mailed (staff asked for it; a store always does).
 */
export function creationDetails(license: License, notifyCustomer: boolean): Record<string, unknown> {
  return apiObject(
    apiFields(license, 'licenseType', 'customerName'),
    apiTimes(license, 'expiresAt'),
    apiFields(license, 'graceDays', 'limits', 'features', 'policy'),
    { store: license.storeName ?? null, subscription_id: license.storeSubscriptionId ?? null, notify_customer: notifyCustomer },
  );
}

/**
 * The one way a licence is created (docs/licences.md, Creating), whatever the door: a fresh key drawn again while it
 * is taken, in the caller's transaction, and the creation told to the recorder with the same details every time.
 */
@Injectable()
export class LicenseCreation {
  constructor(
    private readonly licenses: LicensesRepository,
    private readonly events: EventRecorder,
  ) {}

  /**
   * Inserts the licence with a fresh key (the product's prefix); a key already taken is drawn again without aborting
   * the caller's transaction (the insert skips a taken key). Its product is attached.
   */
  async insert(manager: EntityManager, terms: LicenseTerms, now: Date): Promise<License> {
    const { product, ...fields } = terms;
    for (let attempt = 1; attempt <= KEY_ATTEMPTS; attempt++) {
      const license = await this.licenses.insert(
        { ...fields, productId: product.id, licenseKey: this.newLicenseKey(product.keyPrefix), createdAt: now },
        manager,
      );
      if (license) {
        license.product = product;
        return license;
      }
    }
    throw new Error(`no free licence key after ${KEY_ATTEMPTS} draws`);
  }

  /** The use case: the licence and its `license.created`, in the caller's transaction; `now` is its creation time. */
  async create(manager: EntityManager, terms: LicenseTerms, actor: Actor, notifyCustomer: boolean, now = new Date()): Promise<License> {
    const license = await this.insert(manager, terms, now);
    await this.events.record(manager, this.created(license, actor, notifyCustomer, now));
    return license;
  }

  /** The event of a new licence: its details, and the licence as GET shows it (no seats yet). */
  created(license: License, actor: Actor, notifyCustomer: boolean, now: Date): DomainEvent {
    return licenseEvent('license.created', actor, license, { seats: [], now, details: creationDetails(license, notifyCustomer) });
  }

  /** Kept separate so a test can force a key collision. */
  protected newLicenseKey(prefix: string): string {
    return generateLicenseKey(prefix);
  }
}
