import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { ALL_PRODUCTS, type ProductScope } from '../common/auth/actor';
import { countsByDay, utcDays } from '../common/utc-days';
import { JobsService } from '../jobs/jobs.service';
import { LICENSE_TYPES } from '../licenses/license-type';
import { ProductStatsDto } from './dto/product-stats.dto';
import { StatsRepository } from './stats.repository';

/** A read that had to add up more delta rows than this folds them (a folded table reads a few dozen). */
const FOLD_AFTER_READING_ROWS = 1_000;
/** The minute check folds when the table grew by this many rows since the last fold (each new seat adds three). */
const FOLD_SLACK_ROWS = 5_000;
export const STATS_FOLD_QUEUE = 'stats.fold';

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
  async expiringPerDay(days: number, now = new Date()): Promise<{ day: string; counts: Record<'expiring', number> }[]> {
    const range = utcDays(now, 0, days);
    const rows = await this.stats.expiringPerDay(now, range.end);
    return countsByDay(
      range.days,
      ['expiring'] as const,
      rows.map((row) => ({ ...row, key: 'expiring' })),
    );
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
