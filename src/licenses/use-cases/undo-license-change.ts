import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { type Actor, ALL_PRODUCTS, type ProductScope } from '../../common/auth/actor';
import { AppError } from '../../common/errors/app-error';
import { LicenseDetailsDto } from '../dto/license.dto';
import { ChangeLicense } from './change-license';
import { ExtendLicense } from './extend-license';
import { expiryUndoRefusal, licenseState, suspendUndoRefusal } from './license-rules';
import { LicenseWriter } from './license-writer';

/**
 * Undo of a bulk change (docs/dashboard.md, Bulk actions): a renewal or an extension goes back to `previous` while the
 * expiry still is `left` (what the operation left); a suspension is reinstated while it still is suspended.
 */
@Injectable()
export class UndoLicenseChange {
  constructor(
    private readonly writer: LicenseWriter,
    private readonly extend: ExtendLicense,
    private readonly changes: ChangeLicense,
  ) {}

  /** In the caller's transaction; 409 CONFLICT when the licence changed since (or was revoked). */
  async undoIn(
    manager: EntityManager,
    id: number,
    back: { left: Date; previous: Date } | 'reinstate',
    actor: Actor,
    products: ProductScope = ALL_PRODUCTS,
    extra: Record<string, unknown> = {},
  ): Promise<LicenseDetailsDto> {
    const license = await this.writer.lock(manager, id, products);
    const state = licenseState(license);
    const refusal = back === 'reinstate' ? suspendUndoRefusal(state) : expiryUndoRefusal(state, back.left);
    if (refusal) throw AppError.conflict(refusal);
    if (back !== 'reinstate') return this.extend.moveExpiryIn(manager, license, back.previous, actor, extra);
    // A reinstatement is PUT's `active: true`, as the dashboard's Reinstate (SuspendLicense.reinstate).
    return (await this.changes.changeIn(manager, id, { active: true }, actor, products, null, extra)).license;
  }
}
