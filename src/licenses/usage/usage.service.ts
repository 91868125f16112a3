import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { DomainEvent, EventRecorder } from '../../events/event-recorder';
import { ALL_PRODUCTS, type Actor, type ProductScope } from '../../common/auth/actor';
import { AppError } from '../../common/errors/app-error';
import { ErrorCode } from '../../common/errors/error-codes';
import { mergePolicy } from '../../common/seat-policy/license-policy';
import { LicensesRepository } from '../licenses.repository';
import type { SeatRequest } from '../seats/seat-decisions';
import { SeatsRepository } from '../seats/seats.repository';
import { decideUsage, NOT_METERED, usageAnswer, UsageAnswer, usageLimitReached, usagePeriod, UsagePeriod, usesIn } from './usage-decisions';
import { UsageRepository } from './usage.repository';

export interface UsageRequest extends SeatRequest {
  /** 1..10^6 (checked by the request's DTO). */
  increment: number;
  idempotencyKey?: string;
}

/** A licence's usage as the admin sees it: this period (the answer's fields) and the past periods, newest first. */
export interface UsageReport extends UsageAnswer {
  uses_period: 'none' | 'month';
  history: { period_start: string; period_end: string | null; uses: number }[];
}

/**
 * The usage meter's use cases (docs/licences.md, Usage metering): a client counts uses, the admin reads and resets
 * them. A count loads once, decides with decideUsage, then counts with one atomic statement; with an idempotency key,
 * in one transaction: claim the key, the increment, the first answer stored with the key. The increment that reaches
 * the cap records `license.usage_limit_reached`.
 */
@Injectable()
export class UsageService {
  constructor(
    private readonly licenses: LicensesRepository,
    private readonly seats: SeatsRepository,
    private readonly usage: UsageRepository,
    private readonly events: EventRecorder,
  ) {}

  async recordUsage(request: UsageRequest, actor: Actor): Promise<UsageAnswer> {
    if (request.idempotencyKey === undefined) {
      // Most increments leave the count below the cap: the checks and the count are one statement, no event to record.
      const now = new Date();
      const monthStart = usagePeriod({ uses_period: 'month' }, now, now).start;
      const counted = await this.usage.countBelowCap(request.licenseKey, request.machineFingerprint, request.increment, monthStart, now);
      if (counted) {
        return usageAnswer(counted.maxUses, counted.uses, usagePeriod({ uses_period: counted.usesPeriod }, counted.createdAt, now));
      }
    }
    // The seat check of validate, without its last_seen refresh (interval 0: `stale` is not used here).
    const found = await this.seats.findForCheck(request.licenseKey, request.machineFingerprint, 0);
    const decision = decideUsage(found?.license ?? null, found?.seat ?? null, new Date());
    if (decision.kind === 'deny') throw decision.error;
    if (decision.kind === 'unmetered') return NOT_METERED;
    const license = found!.license;
    const { period, maxUses } = decision;
    const requestHash = createHash('sha256')
      .update(JSON.stringify([request.machineFingerprint, request.increment]))
      .digest('hex');
    // The event the increment that reaches the cap records, in the increment's own statement (written only then).
    const limitReached: DomainEvent = {
      type: 'license.usage_limit_reached',
      actor,
      licenseId: license.id,
      productId: license.productId,
      productCode: license.productCode,
      details: {
        license_key: request.licenseKey,
        machine_fingerprint: request.machineFingerprint,
        ...usageAnswer(maxUses, maxUses, period),
      },
    };
    const count = async (manager?: EntityManager): Promise<number | null> => {
      const change = this.usage.incrementChange(license.id, period.start, request.increment, maxUses);
      const [row] = await this.events.recordWith<{ uses: string }>(manager, change, [limitReached]);
      return row ? Number(row.uses) : null;
    };
    if (request.idempotencyKey === undefined) {
      // Without a key the count and its event are one statement, no transaction around it.
      const uses = await count();
      if (uses === null) throw usageLimitReached(maxUses, await this.usage.usesIn(license.id, period.start), request.increment);
      return usageAnswer(maxUses, uses, period);
    }
    const idempotencyKey = request.idempotencyKey;
    return this.events.transaction(async (manager) => {
      const claim = await this.usage.claimIdempotencyKey(license.id, idempotencyKey, requestHash, manager);
      if (!claim.claimed) {
        if (claim.requestHash !== requestHash || !claim.answer) {
          throw new AppError(ErrorCode.IDEMPOTENCY_KEY_REUSED, 409, 'This idempotency key was used with another request body');
        }
        return claim.answer;
      }
      const uses = await count(manager);
      // Thrown inside the transaction: it rolls back the key's claim, since only 200 answers are kept.
      if (uses === null) throw usageLimitReached(maxUses, await this.usage.usesIn(license.id, period.start, manager), request.increment);
      const answer = usageAnswer(maxUses, uses, period);
      await this.usage.saveAnswer(license.id, idempotencyKey, answer, manager);
      return answer;
    });
  }

  /** docs/licences.md, Usage metering: this period's count and one row per past period; 404 NOT_FOUND when unknown. */
  async usageReport(licenseId: number, products: ProductScope = ALL_PRODUCTS): Promise<UsageReport> {
    const license = await this.licenses.getById(licenseId, undefined, products);
    if (!license) throw AppError.notFound('License');
    const policy = mergePolicy(license.product?.defaultPolicy, license.policy);
    const period = usagePeriod(policy, license.createdAt, new Date());
    const history = await this.usage.history(license.id);
    const current: UsageAnswer =
      policy.max_uses === null
        ? { ...NOT_METERED, uses: usesIn(period, history[0] ?? null) }
        : usageAnswer(policy.max_uses, usesIn(period, history[0] ?? null), period);
    return {
      ...current,
      uses_period: policy.uses_period,
      history: history
        .filter((h) => h.periodStart.getTime() < period.start.getTime())
        .map((h) => ({
          period_start: h.periodStart.toISOString(),
          period_end: usagePeriod(policy, h.periodStart, h.periodStart).end?.toISOString() ?? null,
          uses: h.uses,
        })),
    };
  }

  /** Sets this period's count to 0 (audit `license.usage_reset`); 404 NOT_FOUND when unknown. */
  async resetUsage(licenseId: number, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<UsageReport> {
    const license = await this.licenses.getById(licenseId, undefined, products);
    if (!license) throw AppError.notFound('License');
    const policy = mergePolicy(license.product?.defaultPolicy, license.policy);
    const period: UsagePeriod = usagePeriod(policy, license.createdAt, new Date());
    await this.events.transaction(async (manager) => {
      const before = await this.usage.reset(license.id, period.start, manager);
      await this.events.record(manager, {
        type: 'license.usage_reset',
        actor,
        licenseId: license.id,
        productId: license.productId,
        productCode: license.product?.code ?? null,
        details: { period_start: period.start.toISOString(), uses_before: before },
      });
    });
    return this.usageReport(licenseId, products);
  }
}
