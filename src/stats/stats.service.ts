import { Injectable } from '@nestjs/common';
import { LICENSE_TYPES } from '../licenses/license-type';
import { ProductStatsDto } from './dto/product-stats.dto';
import { StatsRepository } from './stats.repository';

/** Read-only statistics for the admin API and the dashboard. */
@Injectable()
export class StatsService {
  constructor(private readonly stats: StatsRepository) {}

  /** One entry per product (in product id order): licences by status and type, current seats and recent activations. */
  async productStats(): Promise<ProductStatsDto[]> {
    const rows = await this.stats.productStats();
    return rows.map((r) => ({
      product_code: r.product_code,
      product_name: r.product_name,
      licenses: { total: r.total, active: r.active, grace: r.grace, expired: r.expired, revoked: r.revoked, suspended: r.suspended },
      activations: { current: r.current_seats, last_30_days: r.seats_last_30_days },
      by_type: Object.fromEntries(LICENSE_TYPES.map((type) => [type, r.by_type[type] ?? 0])),
    }));
  }
}
