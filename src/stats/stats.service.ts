import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { AuditService } from '../audit/audit.service';
import { ALL_PRODUCTS, type ProductScope, productScopeIncludes } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import { countsByDay, utcDays } from '../common/utc-days';
import { JobsService } from '../jobs/jobs.service';
import { LICENSE_TYPES } from '../licenses/license-type';
import { ProductsService } from '../products/products.service';
import { DailyStatsDto, DailyStatsQueryDto } from './dto/daily-stats.dto';
import { ProductStatsDto } from './dto/product-stats.dto';
import { StatsRepository } from './stats.repository';

/** A read that had to add up more delta rows than this folds them (a folded table reads a few dozen). */
const FOLD_AFTER_READING_ROWS = 1_000;
/** The minute check folds when the table grew by this many rows since the last fold (each new seat adds three). */
const FOLD_SLACK_ROWS = 5_000;
export const STATS_FOLD_QUEUE = 'stats.fold';
/** The longest range of GET /stats/daily, and the default: a year (a leap one) and the last 30 days. */
const DAILY_MAX_DAYS = 366;
const DAILY_DEFAULT_DAYS = 30;
const DAY_MS = 86_400_000;
/** The audit actions each column of the daily statistics counts (docs/licences.md, Daily statistics). */
const DAILY_COLUMNS = {
  activations: 'license.activated',
  refusals: 'license.activation_denied',
  deactivations: 'license.deactivated',
  trials: 'license.trial_started',
  new_licences: 'license.created',
} as const;
const DAILY_ACTIONS = Object.values(DAILY_COLUMNS);

/**
 * Read-only statistics for the admin API and the dashboard. The only write is folding the counters'
 * delta rows, which changes no sum. It runs on the job engine: a check every minute (once per deployment,
 * on whichever instance takes the job) and a fold requested by a read that had to add up many rows; the
 * queue keeps at most one fold waiting and one running.
 */
@Injectable()
export class StatsService implements OnModuleInit {
  private readonly logger = new Logger('Stats');
  /** Rows the last fold on this instance kept; another instance's fold leaves it low, which only folds sooner. */
  private keptAfterFold = 0;

  constructor(
    private readonly stats: StatsRepository,
    private readonly jobs: JobsService,
    private readonly audit: AuditService,
    private readonly products: ProductsService,
  ) {}

  onModuleInit(): void {
    this.jobs.schedule<{ force?: boolean }>(STATS_FOLD_QUEUE, '* * * * *', (data) => this.foldIfGrown(data.force === true), {
      policy: 'stately',
      retryLimit: 0,
    });
  }

  /**
   * Usable licences expiring per UTC day, today and the `days - 1` days after it (today counts from `now` on):
   * the statistics page's chart (docs/dashboard.md, Charts).
   */
  async expiringPerDay(
    days: number,
    scope: ProductScope = ALL_PRODUCTS,
    now = new Date(),
  ): Promise<{ day: string; counts: Record<'expiring', number> }[]> {
    const range = utcDays(now, 0, days);
    const rows = await this.stats.expiringPerDay(now, range.end, scope);
    return countsByDay(
      range.days,
      ['expiring'] as const,
      rows.map((row) => ({ ...row, key: 'expiring' })),
    );
  }

  /**
   * One row per UTC day of `from`..`to` (both included; default the last 30 days), counted from the audit log's
   * events, for one product or every product the credential sees (docs/licences.md, Daily statistics).
   */
  async daily(query: DailyStatsQueryDto, scope: ProductScope = ALL_PRODUCTS, now = new Date()): Promise<DailyStatsDto[]> {
    const to = query.to === undefined ? Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) : dayStart(query.to, 'to');
    const from = query.from === undefined ? to - (DAILY_DEFAULT_DAYS - 1) * DAY_MS : dayStart(query.from, 'from');
    if (from > to) throw AppError.field('from', 'from must not be after to');
    const days = (to - from) / DAY_MS + 1;
    if (days > DAILY_MAX_DAYS) throw AppError.field('from', `at most ${DAILY_MAX_DAYS} days from from to to`);
    let productIds: readonly number[] | null = scope;
    if (query.product !== undefined) {
      const product = await this.products.findByCode(query.product);
      // A product the credential may not see answers as an unknown one: its existence is not disclosed.
      if (!product || !productScopeIncludes(scope, product.id)) throw AppError.notFound('Product');
      productIds = [product.id];
    }
    const range = {
      start: new Date(from),
      end: new Date(to + DAY_MS),
      days: Array.from({ length: days }, (_, i) => new Date(from + i * DAY_MS).toISOString().slice(0, 10)),
    };
    const counted = await this.audit.countsPerDay(DAILY_ACTIONS, range, { productIds });
    return counted.map(({ day, counts }) => ({
      day,
      activations: counts[DAILY_COLUMNS.activations],
      refusals: counts[DAILY_COLUMNS.refusals],
      deactivations: counts[DAILY_COLUMNS.deactivations],
      trials: counts[DAILY_COLUMNS.trials],
      new_licences: counts[DAILY_COLUMNS.new_licences],
    }));
  }

  /** One entry per product (in product id order; only the credential's products when it is limited): licences by status and type, current seats and recent activations. */
  async productStats(products: ProductScope = ALL_PRODUCTS): Promise<ProductStatsDto[]> {
    const { rows, deltaRows } = await this.stats.productCounters(products);
    const trials = await this.stats.trialCounts();
    if (deltaRows > FOLD_AFTER_READING_ROWS) {
      this.jobs.send(STATS_FOLD_QUEUE, { force: true }).catch((err: Error) => this.logger.warn(`requesting a fold failed: ${err.message}`));
    }
    return rows.map(({ product_id, product_code, product_name, counts }) => {
      const count = (metric: string) => Number(counts[metric] ?? 0);
      const byType = Object.fromEntries(LICENSE_TYPES.map((type) => [type, count(`type:${type}`)]));
      // Usable licences split by time: past expires_at (grace or expired), past the grace end (expired).
      const passed = count('expires');
      const expired = count('grace_ends');
      return {
        product_code,
        product_name,
        licenses: {
          total: Object.values(byType).reduce((a, b) => a + b, 0),
          active: count('usable') - passed,
          grace: passed - expired,
          expired,
          revoked: count('revoked'),
          suspended: count('suspended'),
        },
        activations: {
          current: count('seats'),
          // Totals minus those that have left the 30-day window.
          last_30_days: count('activated') - count('activated_ends'),
          released_by_heartbeat_last_30_days: count('heartbeat_released') - count('heartbeat_released_ends'),
        },
        by_type: byType,
        trials: trials.get(product_id) ?? { started: 0, converted: 0 },
      };
    });
  }

  /** Folds the delta rows; returns the rows kept. */
  async fold(): Promise<number> {
    const kept = await this.stats.compact();
    this.keptAfterFold = kept;
    return kept;
  }

  private async foldIfGrown(force: boolean): Promise<void> {
    if (!force && (await this.stats.estimatedDeltaRows()) <= this.keptAfterFold + FOLD_SLACK_ROWS) return;
    await this.fold();
  }
}

/** The start of a `YYYY-MM-DD` UTC day in ms; a day that is not in the calendar (2026-02-30) is a field error. */
function dayStart(text: string, field: 'from' | 'to'): number {
  const ms = Date.parse(`${text}T00:00:00.000Z`);
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== text)
    throw AppError.field(field, `${field} must be a date as YYYY-MM-DD`);
  return ms;
}
