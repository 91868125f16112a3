import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { type Actor, ALL_PRODUCTS, type ProductScope } from '../../common/auth/actor';
import { AppError } from '../../common/errors/app-error';
import { ErrorCode } from '../../common/errors/error-codes';
import { LicenseDetailsDto } from '../dto/license.dto';
import type { License } from '../license.entity';
import { LicenseWriter } from './license-writer';

/** What a revoke did: revoked now, or nothing because the licence already was (each door says so its own way). */
export type RevokeOutcome =
  { outcome: 'revoked'; license: LicenseDetailsDto } | { outcome: 'already_revoked'; revokedAt: Date | null; license: LicenseDetailsDto };

/**
 * Revoke (docs/licences.md, Revoking and releasing): final, keeping the reason; seats stay bound. One rule for every door:
 * a licence revoked already is left as it is, with no second event. The admin API and the dashboard answer that with
 * 409 ALREADY_REVOKED; a store event is processed with the note "already revoked" (docs/stores.md, The ledger).
 */
@Injectable()
export class RevokeLicense {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly writer: LicenseWriter,
  ) {}

  /** Staff's revoke (admin API, dashboard): 404 NOT_FOUND outside `products`, 409 ALREADY_REVOKED when it already is. */
  async revoke(id: number, reason: string, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<LicenseDetailsDto> {
    const done = await this.dataSource.transaction(async (manager) =>
      this.revokeIn(manager, await this.writer.lock(manager, id, products), reason, actor),
    );
    if (done.outcome === 'already_revoked')
      throw AppError.conflict(
        'The licence is already revoked',
        { revoked_at: done.revokedAt?.toISOString() ?? null },
        ErrorCode.ALREADY_REVOKED,
      );
    return done.license;
  }

  /** Revokes a licence the caller locked, in the caller's transaction; `already_revoked` (nothing written) when it is. */
  async revokeIn(manager: EntityManager, license: License, reason: string, actor: Actor): Promise<RevokeOutcome> {
    if (license.revoked)
      return { outcome: 'already_revoked', revokedAt: license.revokedAt, license: await this.writer.details(license, manager) };
    license.revoked = true;
    license.revokedAt = new Date();
    license.revokeReason = reason;
    return { outcome: 'revoked', license: await this.writer.saveAndRecord(manager, license, actor, { reason }, 'license.revoked') };
  }
}
