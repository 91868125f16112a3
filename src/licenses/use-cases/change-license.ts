import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { type Actor, ALL_PRODUCTS, type ProductScope } from '../../common/auth/actor';
import { AppError } from '../../common/errors/app-error';
import { licensePolicyOverrides } from '../../common/seat-policy/license-policy';
import { parseIsoTimestamp } from '../../common/validation/iso-timestamp';
import type { Product } from '../../products/product.entity';
import { UpdateLicenseDto } from '../dto/create-license.dto';
import { LicenseDetailsDto } from '../dto/license.dto';
import type { License } from '../license.entity';
import { licenseChanges } from '../license-changes';
import { computeExpiresAt } from '../license-expiry';
import { offeredFeatures } from './license-rules';
import { type ChangeableFields, LicenseWriter } from './license-writer';

/** The fields PUT may change. */
type Updatable = Exclude<keyof ChangeableFields, 'storeSubscriptionId' | 'storeSubscriptionEndedAt'>;

/**
 * Change (docs/licences.md, Changing (PUT)): the admin API's PUT and the dashboard's edit form; suspend, reinstate and
 * the stores' events write through applyIn.
 */
@Injectable()
export class ChangeLicense {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly writer: LicenseWriter,
  ) {}

  /**
   * Partial update: `limits` replace the licence's own overrides, `active` false suspends and true reinstates (409
   * CONFLICT for a revoked licence), `expires_at` may be in the past. Changing license_type to or from PERPETUAL
   * without an expires_at clears it or computes it from now. Writes `license.updated` with each changed field's old
   * and new value; nothing when nothing changed.
   */
  async change(
    id: number,
    input: UpdateLicenseDto,
    actor: Actor,
    products: ProductScope = ALL_PRODUCTS,
    reason?: string | null,
  ): Promise<LicenseDetailsDto> {
    if (!Object.values(input).some((v) => v !== undefined)) throw AppError.field('body', 'Give at least one field to change');
    return this.dataSource.transaction(async (manager) => (await this.changeIn(manager, id, input, actor, products, reason)).license);
  }

  /**
   * change in the caller's transaction; `changed` is false when nothing differed (then nothing is recorded).
   * `extra` joins the audit entry's details (a bulk operation's id: docs/dashboard.md, Bulk actions).
   */
  async changeIn(
    manager: EntityManager,
    id: number,
    input: UpdateLicenseDto,
    actor: Actor,
    products: ProductScope = ALL_PRODUCTS,
    reason?: string | null,
    extra: Record<string, unknown> = {},
  ): Promise<{ license: LicenseDetailsDto; changed: boolean }> {
    const license = await this.writer.lock(manager, id, products);
    if (input.active === true && license.revoked) {
      throw AppError.conflict('A revoked licence cannot be made active again', { field: 'active' });
    }
    return this.applyIn(manager, license, updatedFields(license, input, new Date()), actor, { ...(reason ? { reason } : {}), ...extra });
  }

  /**
   * `next` applied to a licence the caller locked: each field that differs goes into the event's `changes`
   * (licenseChanges), the licence is saved and `license.updated` recorded with `details`; `changed` is false (nothing
   * written) when nothing differed. The one change write of every door: PUT, suspend, reinstate and the stores' events.
   */
  async applyIn(
    manager: EntityManager,
    license: License,
    next: Partial<ChangeableFields>,
    actor: Actor,
    details: Record<string, unknown> = {},
  ): Promise<{ license: LicenseDetailsDto; changed: boolean }> {
    const changes = licenseChanges(license, next);
    if (Object.keys(changes).length === 0) return { license: await this.writer.details(license, manager), changed: false };
    Object.assign(license, next);
    return { license: await this.writer.saveAndRecord(manager, license, actor, { changes, ...details }), changed: true };
  }
}

/** The licence's fields after applying `input`, checked against the product and the PERPETUAL rule. */
function updatedFields(license: License, input: UpdateLicenseDto, now: Date): Pick<License, Updatable> {
  const licenseType = input.license_type ?? license.licenseType;
  let expiresAt = license.expiresAt;
  if (input.expires_at !== undefined) expiresAt = input.expires_at === null ? null : (parseIsoTimestamp(input.expires_at) as Date);
  else if (licenseType !== license.licenseType)
    expiresAt = licenseType === 'PERPETUAL' ? null : (license.expiresAt ?? computeExpiresAt(licenseType, now));
  if (licenseType === 'PERPETUAL' && expiresAt !== null)
    throw AppError.field('expires_at', 'A PERPETUAL licence never expires: expires_at must be null');
  if (licenseType !== 'PERPETUAL' && expiresAt === null) throw AppError.field('expires_at', `A ${licenseType} licence needs an expires_at`);
  const pick = <T>(given: T | undefined, current: T): T => (given === undefined ? current : given);
  return {
    customerName: pick(input.customer_name, license.customerName),
    customerEmail: pick(input.customer_email, license.customerEmail),
    customerPib: pick(input.customer_pib, license.customerPib),
    limits: pick(input.limits, license.limits),
    features: input.features === undefined ? license.features : offeredFeatures(input.features, license.product as Product),
    // Key by key: a given value sets that override, null clears it, an omitted key keeps it.
    policy: input.policy === undefined ? license.policy : licensePolicyOverrides({ ...license.policy, ...input.policy }),
    graceDays: pick(input.grace_days, license.graceDays),
    notes: pick(input.notes, license.notes),
    expiresAt,
    licenseType,
    active: pick(input.active, license.active),
  };
}
