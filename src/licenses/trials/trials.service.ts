import { Injectable } from '@nestjs/common';
import { EventRecorder } from '../../events/event-recorder';
import { type Actor, ALL_PRODUCTS, type ProductScope } from '../../common/auth/actor';
import { AppError } from '../../common/errors/app-error';
import { uniqueViolation } from '../../common/errors/database-errors';
import { ErrorCode } from '../../common/errors/error-codes';
import type { Product } from '../../products/product.entity';
import { ProductsService } from '../../products/products.service';
import { LicenseCreation } from '../license-creation';
import type { BoundSeat } from '../seats/seats.service';
import { ActivationRow, seatsFromRows } from '../seats/seats.repository';
import { TRIAL_KEY, TrialsFromIp, TrialsRepository } from './trials.repository';

const DAY_MS = 86_400_000;

export interface TrialRequest {
  /** Product code, upper-cased. */
  product: string;
  machineFingerprint: string;
  hostname?: string | null;
  os?: string | null;
  appVersion?: string | null;
  customerEmail?: string | null;
}

/**
 * Self-service trials (docs/licences.md, Trials): a new TRIAL licence bound to the asking machine, one per product and
 * machine ever. The licence, the trial's claim, the seat and `license.trial_started` commit together or not at all;
 * a second claim fails on the claim's primary key, so concurrent identical requests give exactly one trial.
 */
@Injectable()
export class TrialsService {
  constructor(
    private readonly products: ProductsService,
    private readonly creation: LicenseCreation,
    private readonly trials: TrialsRepository,
    private readonly events: EventRecorder,
  ) {}

  async startTrial(request: TrialRequest, actor: Actor): Promise<BoundSeat> {
    const product = await this.trialProduct(request.product);
    const trial = product.trial;
    if (!trial) throw new AppError(ErrorCode.TRIALS_DISABLED, 400, 'This product offers no self-service trials');
    const features = trial.features ? trial.features.filter((f) => product.availableFeatures.includes(f)) : [...product.availableFeatures];
    const limits = { max_installations: trial.max_installations ?? 1 };
    const email = request.customerEmail ? request.customerEmail.toLowerCase() : null;
    try {
      return await this.events.transaction(async (manager) => {
        const now = new Date();
        const license = await this.creation.insert(
          manager,
          {
            product,
            licenseType: 'TRIAL',
            customerName: request.hostname || 'Trial',
            customerEmail: email,
            customerPib: null,
            limits,
            features,
            policy: {},
            graceDays: 0,
            notes: null,
            expiresAt: new Date(now.getTime() + trial.days * DAY_MS),
          },
          now,
        );
        const change = this.trials.start({
          productId: product.id,
          machineFingerprint: request.machineFingerprint,
          licenseId: license.id,
          customerEmail: email,
          ip: actor.ip,
          hostname: request.hostname ?? null,
          os: request.os ?? null,
          appVersion: request.appVersion ?? null,
          now,
        });
        // One statement: the claim, the seat and the event, which carries the creation's details like license.created
        // from every other door plus the machine; the seat's id is only known after it, so details name the machine.
        const started = this.creation.created(license, actor, false, now);
        const [seat] = seatsFromRows(
          await this.events.recordWith<ActivationRow>(manager, change, [
            {
              ...started,
              type: 'license.trial_started',
              details: {
                ...started.details,
                machine_fingerprint: request.machineFingerprint,
                hostname: request.hostname ?? null,
                os: request.os ?? null,
                app_version: request.appVersion ?? null,
                days: trial.days,
              },
            },
          ]),
        );
        return { license, seat, created: true, seats: [seat] };
      });
    } catch (err) {
      if (uniqueViolation(err) === TRIAL_KEY) {
        throw new AppError(ErrorCode.TRIAL_ALREADY_USED, 409, 'This machine already had a trial of this product');
      }
      throw err;
    }
  }

  /**
   * The IPs that started the most trials in the last `hours` (docs/licences.md, Trials): many trials from one IP
   * in a day is one person resetting a machine's fingerprint, or a script.
   */
  busiestIps(hours: number, limit: number, scope: ProductScope = ALL_PRODUCTS, now = new Date()): Promise<TrialsFromIp[]> {
    return this.trials.busiestIps(new Date(now.getTime() - hours * 3_600_000), limit, scope);
  }

  /** An active product by code; an unknown or inactive one is a VALIDATION_ERROR naming `product`. */
  private async trialProduct(code: string): Promise<Product> {
    try {
      return await this.products.getActiveProductByCode(code);
    } catch (err) {
      if (err instanceof AppError && err.code === ErrorCode.VALIDATION_ERROR) {
        throw AppError.field('product', `product "${code}" is not an active product`);
      }
      throw err;
    }
  }
}
