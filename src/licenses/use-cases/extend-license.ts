import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { type Actor, ALL_PRODUCTS, type ProductScope } from '../../common/auth/actor';
import { LicenseDetailsDto } from '../dto/license.dto';
import type { License } from '../license.entity';
import { licenseChanges } from '../license-changes';
import { movedExpiry } from './license-rules';
import { LicenseWriter } from './license-writer';

/**
 * Renew and extend (docs/licences.md, Licence types and expiry; docs/dashboard.md, Bulk actions): the expiry moves by one
 * term of the licence's type, or by whole days, from the later of now and its current expiry (movedExpiry), so an
 * expired licence gets a full term from today and an early renewal loses nothing. 409 CONFLICT for PERPETUAL and
 * revoked licences. Audited as `license.updated` with the expires_at change.
 */
@Injectable()
export class ExtendLicense {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly writer: LicenseWriter,
  ) {}

  /** The dashboard's Renew: one term, `renewed: true` in the audit entry. */
  renew(id: number, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<LicenseDetailsDto> {
    return this.dataSource.transaction((manager) => this.renewIn(manager, id, actor, products));
  }

  /** renew in the caller's transaction, within `products`; `extra` joins the audit entry's details. */
  async renewIn(
    manager: EntityManager,
    id: number,
    actor: Actor,
    products: ProductScope = ALL_PRODUCTS,
    extra: Record<string, unknown> = {},
  ): Promise<LicenseDetailsDto> {
    const license = await this.writer.lock(manager, id, products);
    return this.moveExpiryIn(manager, license, movedExpiry(license, { renew: true }, new Date()), actor, { renewed: true, ...extra });
  }

  /** `days` days added in the caller's transaction (a bulk extension); `extended_days` in the audit entry. */
  async extendIn(
    manager: EntityManager,
    id: number,
    days: number,
    actor: Actor,
    products: ProductScope = ALL_PRODUCTS,
    extra: Record<string, unknown> = {},
  ): Promise<LicenseDetailsDto> {
    const license = await this.writer.lock(manager, id, products);
    return this.moveExpiryIn(manager, license, movedExpiry(license, { days }, new Date()), actor, { extended_days: days, ...extra });
  }

  /** The new expiry of a locked licence saved and recorded as `license.updated` (the change, then `details`); an undo's too. */
  moveExpiryIn(
    manager: EntityManager,
    license: License,
    expiresAt: Date,
    actor: Actor,
    details: Record<string, unknown>,
  ): Promise<LicenseDetailsDto> {
    const changes = licenseChanges(license, { expiresAt });
    license.expiresAt = expiresAt;
    return this.writer.saveAndRecord(manager, license, actor, { changes, ...details });
  }
}
