import { Get, Inject, Render } from '@nestjs/common';
import { AuditService } from '../../audit/audit.service';
import { LicensesService } from '../../licenses/licenses.service';
import { TrialsService } from '../../licenses/trials.service';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { StatsService } from '../../stats/stats.service';
import { StoreEventsService } from '../../stores/store-events.service';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { CHART_DAYS, CHART_SERIES, dailyChart } from '../views/daily-chart';
import { withLicenses } from './audit.controller';
import { EXPIRING_SOON_DAYS } from './licenses.controller';

const EXPIRING_PANEL_SIZE = 10;
/** Trials by IP: the window and how many addresses the statistics page shows (docs/licences.md, Trials). */
export const TRIAL_IP_HOURS = 24;
const TRIAL_IP_ROWS = 10;

@DashboardController()
export class OverviewController {
  constructor(
    private readonly stats: StatsService,
    private readonly audit: AuditService,
    private readonly licenses: LicensesService,
    private readonly trials: TrialsService,
    private readonly storeEvents: StoreEventsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Start page: per-product statistics, store events needing attention, the licences expiring soonest, the latest audit entries. */
  @Get('dashboard')
  @Render('dashboard')
  async overview() {
    const [products, recent, expiring, trialIps, daily, expiringDaily, storeAttention] = await Promise.all([
      this.stats.productStats(),
      this.audit.listEntries({ limit: 10, offset: 0 }),
      this.licenses.listLicensesForStaff(
        { expiring_within_days: EXPIRING_SOON_DAYS, limit: EXPIRING_PANEL_SIZE, offset: 0 },
        { sort: 'expires_at', direction: 'asc' },
      ),
      this.trials.busiestIps(TRIAL_IP_HOURS, TRIAL_IP_ROWS),
      this.audit.dailyCounts(
        CHART_SERIES.map((s) => s.key),
        CHART_DAYS,
      ),
      this.stats.expiringPerDay(CHART_DAYS),
      this.storeEvents.countNeedingAttention(),
    ]);
    const stores = this.config.stores;
    const storeConnected = Boolean(stores?.stripeWebhookSecret || stores?.paddleWebhookSecret || stores?.lemonsqueezyWebhookSecret);
    const totals = products.reduce(
      (sum, p) => ({
        licenses: sum.licenses + p.licenses.total,
        usable: sum.usable + p.licenses.active + p.licenses.grace,
        seats: sum.seats + p.activations.current,
      }),
      { licenses: 0, usable: 0, seats: 0 },
    );
    return {
      title: 'Statistics',
      nav: 'dashboard',
      products,
      totals,
      // Shown once a store is connected, or while events from one still need attention (docs/dashboard.md, Pages).
      storeAttention: storeConnected || storeAttention > 0 ? { count: storeAttention } : null,
      expiring: expiring.items,
      expiringTotal: expiring.total,
      expiringDays: EXPIRING_SOON_DAYS,
      trialIps: trialIps.map((row) => ({ ...row, href: `/licenses?${new URLSearchParams({ trial_ip: row.ip }).toString()}` })),
      trialIpHours: TRIAL_IP_HOURS,
      chartDays: CHART_DAYS,
      expiringChart: dailyChart(
        `Usable licences expiring per UTC day, today and the next ${CHART_DAYS - 1} days`,
        [{ key: 'expiring', label: 'Expiring' }],
        expiringDaily,
      ),
      daily: dailyChart(`Activations, refusals and new licences per UTC day, last ${CHART_DAYS} days, oldest first`, CHART_SERIES, daily),
      recent: await withLicenses(recent.items, this.licenses),
    };
  }
}
