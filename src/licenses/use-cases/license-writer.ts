import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { type Actor, ALL_PRODUCTS, type ProductScope } from '../../common/auth/actor';
import { AppError } from '../../common/errors/app-error';
import { EventRecorder } from '../../events/event-recorder';
import { LicenseDetailsDto } from '../dto/license.dto';
import type { License } from '../license.entity';
import { toLicenseDetails } from '../license-details';
import { LicensesRepository, type NewLicense } from '../licenses.repository';
import { SeatsRepository } from '../seats/seats.repository';

/** The fields a licence change may set: what a new licence is given but who it is (product, key, origin), and its state. */
export type ChangeableFields = Omit<
  NewLicense,
  'productId' | 'licenseKey' | 'createdAt' | 'convertedFrom' | 'storeName' | 'storeCustomerId' | 'storeOrderId'
> &
  Pick<License, 'active' | 'storeSubscriptionId' | 'storeSubscriptionEndedAt'>;

/**
 * The steps under every licence use case (docs/architecture.md, Licence use cases): lock the row, read it as GET shows it,
 * save it and record its domain event, in the caller's transaction. The use cases hold the rules; this holds the steps.
 */
@Injectable()
export class LicenseWriter {
  constructor(
    private readonly licenses: LicensesRepository,
    private readonly seats: SeatsRepository,
    private readonly events: EventRecorder,
  ) {}

  /** The licence locked for the rest of the caller's transaction, within `products`; 404 NOT_FOUND when unknown. */
  async lock(manager: EntityManager, id: number, products: ProductScope = ALL_PRODUCTS): Promise<License> {
    const license = await this.licenses.lockById(id, manager, products);
    if (!license) throw AppError.notFound('License');
    return license;
  }

  /** The licence as GET shows it (with its current seats), read in the caller's transaction. */
  async details(license: License, manager: EntityManager): Promise<LicenseDetailsDto> {
    return toLicenseDetails(license, await this.seats.listCurrent(license.id, manager), new Date());
  }

  /**
   * The changed licence saved and its event recorded (`license.updated` unless told) with `details`, in the caller's
   * transaction (docs/webhooks.md, The event spine).
   */
  async saveAndRecord(
    manager: EntityManager,
    license: License,
    actor: Actor,
    details: Record<string, unknown>,
    type: 'license.updated' | 'license.revoked' = 'license.updated',
  ): Promise<LicenseDetailsDto> {
    const saved = await this.licenses.save(license, manager);
    const after = await this.details(saved, manager);
    await this.events.record(manager, {
      type,
      actor,
      licenseId: license.id,
      productId: license.productId,
      productCode: license.product?.code,
      license: after,
      details,
    });
    return after;
  }
}
