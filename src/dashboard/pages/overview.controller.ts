import { Get, Render } from '@nestjs/common';
import { AuditService } from '../../audit/audit.service';
import { StatsService } from '../../stats/stats.service';
import { DashboardController } from '../http/dashboard-controller.decorator';

@DashboardController()
export class OverviewController {
  constructor(
    private readonly stats: StatsService,
    private readonly audit: AuditService,
  ) {}

  /** Start page: per-product statistics and the latest audit entries. */
  @Get('dashboard')
  @Render('dashboard')
  async overview() {
    const [products, recent] = await Promise.all([this.stats.productStats(), this.audit.listEntries({ limit: 10, offset: 0 })]);
    const totals = products.reduce(
      (sum, p) => ({
        licenses: sum.licenses + p.licenses.total,
        usable: sum.usable + p.licenses.active + p.licenses.grace,
        seats: sum.seats + p.activations.current,
      }),
      { licenses: 0, usable: 0, seats: 0 },
    );
    return { title: 'Dashboard', nav: 'dashboard', products, totals, recent: recent.items };
  }
}
