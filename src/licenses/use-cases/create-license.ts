import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { type Actor, ALL_PRODUCTS, type ProductScope, productScopeIncludes } from '../../common/auth/actor';
import { AppError } from '../../common/errors/app-error';
import { licensePolicyOverrides } from '../../common/seat-policy/license-policy';
import { parseIsoTimestamp } from '../../common/validation/iso-timestamp';
import { ProductsService } from '../../products/products.service';
import { CreateLicenseDto, DEFAULT_GRACE_DAYS } from '../dto/create-license.dto';
import type { License } from '../license.entity';
import { LicenseCreation, type LicenseTerms } from '../license-creation';
import { computeExpiresAt } from '../license-expiry';
import type { LicenseType } from '../license-type';
import { TrialsRepository } from '../trials/trials.repository';
import { initialExpiryMessage, offeredFeatures } from './license-rules';

/**
 * Create (docs/licences.md, Creating) for staff: the admin API's POST and the dashboard's form, checked against the
 * product, then written by LicenseCreation, the one creation a store purchase and a trial also use.
 */
@Injectable()
export class CreateLicense {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly products: ProductsService,
    private readonly trials: TrialsRepository,
    private readonly creation: LicenseCreation,
  ) {}

  /**
   * Issues a licence with a fresh key. Throws 400 VALIDATION_ERROR for an unknown or inactive product,
   * features outside the product's, an expires_at not in the future, or an expires_at on a PERPETUAL licence.
   */
  async create(input: CreateLicenseDto, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<License> {
    const product = await this.products.getActiveProductByCode(input.product_code);
    // Outside the credential's products a product is as unknown as one that does not exist.
    if (!productScopeIncludes(products, product.id))
      throw AppError.field('product_code', `product_code "${input.product_code}" is not an active product`);
    const features = input.features === undefined ? [...product.availableFeatures] : offeredFeatures(input.features, product);
    const now = new Date();
    const expiresAt = initialExpiry(input.license_type, input.expires_at, now);
    return this.dataSource.transaction(async (manager) => {
      const convertedFrom = input.customer_email ? await this.trials.newestTrialFor(product.id, input.customer_email, manager) : null;
      const terms: LicenseTerms = {
        product,
        convertedFrom,
        licenseType: input.license_type,
        customerName: input.customer_name,
        customerEmail: input.customer_email ?? null,
        customerPib: input.customer_pib ?? null,
        limits: input.limits ?? {},
        features,
        policy: licensePolicyOverrides(input.policy ?? {}),
        graceDays: input.grace_days ?? DEFAULT_GRACE_DAYS,
        notes: input.notes ?? null,
        expiresAt,
      };
      // The mail fan-out sends license_issued when notify_customer is set (docs/mail.md, When mail is sent).
      return this.creation.create(manager, terms, actor, input.notify_customer === true, now);
    });
  }
}

/** PERPETUAL never expires; every other type has an expiry, explicit (in the future) or computed from now. */
function initialExpiry(type: LicenseType, given: string | undefined, now: Date): Date | null {
  const message = initialExpiryMessage(type, given, now);
  if (message) throw AppError.field('expires_at', message);
  return given === undefined ? computeExpiresAt(type, now) : (parseIsoTimestamp(given) as Date);
}
