import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { type Actor, ALL_PRODUCTS, type ProductScope } from '../../common/auth/actor';
import { AppError } from '../../common/errors/app-error';
import { ErrorCode } from '../../common/errors/error-codes';
import { EventRecorder } from '../../events/event-recorder';
import { ReleaseResultDto } from '../dto/license-actions.dto';
import { SeatsRepository } from '../seats/seats.repository';
import { LicenseWriter } from './license-writer';

export interface ReleaseSeatsInput {
  machine_fingerprint?: string;
  reason?: string | null;
}

/**
 * Release (docs/licences.md, Revoking and releasing): staff force-release the seat of one machine, or every seat, for a
 * machine that cannot deactivate itself. (A customer's release in the portal is the client's deactivation.)
 */
@Injectable()
export class ReleaseSeats {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly writer: LicenseWriter,
    private readonly seats: SeatsRepository,
    private readonly events: EventRecorder,
  ) {}

  /** 409 NOT_ACTIVATED when nothing (or not that machine) is bound. */
  async release(id: number, input: ReleaseSeatsInput, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<ReleaseResultDto> {
    return this.dataSource.transaction(async (manager) => {
      // The licence row lock serialises this with activations of the same licence.
      const license = await this.writer.lock(manager, id, products);
      const released = await this.seats.release(id, input.machine_fingerprint, 'force_released', manager);
      if (released.length === 0) {
        const message = input.machine_fingerprint
          ? 'That machine holds no seat of this licence'
          : 'The licence is not activated on any machine';
        throw AppError.conflict(message, undefined, ErrorCode.NOT_ACTIVATED);
      }
      await this.events.record(manager, {
        type: 'license.released',
        actor,
        licenseId: id,
        productId: license.productId,
        productCode: license.product?.code,
        license: await this.writer.details(license, manager),
        details: {
          machine_fingerprints: released.map((s) => s.machineFingerprint),
          released: released.length,
          reason: input.reason ?? null,
        },
      });
      return { message: `${released.length} seat${released.length === 1 ? '' : 's'} released`, released: released.length };
    });
  }
}
