import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { ALL_PRODUCTS, type ProductScope } from '../common/auth/actor';
import { LICENSE_TYPES } from '../licenses/license-type';
import { ProductStatsDto } from './dto/product-stats.dto';
import { StatsRepository } from './stats.repository';

/** A read that had to add up more delta rows than this folds them (a folded table reads a few dozen). */
const FOLD_AFTER_READING_ROWS = 1_000;
/** The minute check folds when the table grew by this many rows since the last fold (each new seat adds two). */
const FOLD_SLACK_ROWS = 5_000;
const FOLD_CHECK_INTERVAL_MS = 60_000;

/**
 * Read-only statistics for the admin API and the dashboard. The only write is folding the counters'
 * delta rows, which changes no sum: after a read that had to add up many, and once a minute when needed.
 */
@Injectable()
export class StatsService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Stats');
  private keptAfterFold = 0;
  private folding?: Promise<void>;
  private timer?: NodeJS.Timeout;

  constructor(private readonly stats: StatsRepository) {}

  /** One entry per product (in product id order; only the credential's products when it is limited): licences by status and type, current seats and recent activations. */
  async productStats(products: ProductScope = ALL_PRODUCTS): Promise<ProductStatsDto[]> {
    const { rows, deltaRows } = await this.stats.productCounters(products);
    if (deltaRows > FOLD_AFTER_READING_ROWS) void this.fold();
    return rows.map(({ product_code, product_name, counts }) => {
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
        activations: { current: count('seats'), last_30_days: count('activated') },
        by_type: byType,
      };
    });
  }

  /** Folds the delta rows; one fold at a time per instance (instances folding at once is safe too). */
  fold(): Promise<void> {
    this.folding ??= this.stats
      .compact()
      .then((kept) => void (this.keptAfterFold = kept))
      .catch((err: Error) => this.logger.warn(`folding the statistics counters failed: ${err.message}`))
      .finally(() => (this.folding = undefined));
    return this.folding;
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.stats
        .estimatedDeltaRows()
        .then((rows) => (rows > this.keptAfterFold + FOLD_SLACK_ROWS ? this.fold() : undefined))
        .catch(() => undefined);
    }, FOLD_CHECK_INTERVAL_MS).unref();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.folding;
  }
}
