import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { type Actor, ALL_PRODUCTS, type ProductScope } from '../../common/auth/actor';
import { AppError } from '../../common/errors/app-error';
import { LicenseDetailsDto } from '../dto/license.dto';
import { ChangeLicense } from './change-license';
import { REVOKED_NOT_SUSPENDED } from './license-rules';
import { LicenseWriter } from './license-writer';

/**
 * Suspend and reinstate (docs/licences.md, Changing (PUT); docs/dashboard.md, Bulk actions): `active` false or true,
 * written as a change. 409 CONFLICT for a revoked licence either way. The admin API's PUT `{active}` is the same change.
 */
@Injectable()
export class SuspendLicense {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly writer: LicenseWriter,
    private readonly changes: ChangeLicense,
  ) {}

  /** The dashboard's Suspend, with an optional reason for the audit entry. */
  async suspend(id: number, reason: string | null, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<void> {
    await this.dataSource.transaction((manager) => this.suspendIn(manager, id, reason, actor, products));
  }

  /** Suspends in the caller's transaction; false when the licence already was suspended (nothing recorded). */
  async suspendIn(
    manager: EntityManager,
    id: number,
    reason: string | null,
    actor: Actor,
    products: ProductScope = ALL_PRODUCTS,
    extra: Record<string, unknown> = {},
  ): Promise<boolean> {
    const license = await this.writer.lock(manager, id, products);
    if (license.revoked) throw AppError.conflict(REVOKED_NOT_SUSPENDED);
    return (await this.changes.applyIn(manager, license, { active: false }, actor, { ...(reason ? { reason } : {}), ...extra })).changed;
  }

  /** The dashboard's Reinstate: PUT's `active: true` (409 CONFLICT for a revoked licence). */
  reinstate(id: number, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<LicenseDetailsDto> {
    return this.changes.change(id, { active: true }, actor, products);
  }
}
