import { Get, Inject, Query, Render } from '@nestjs/common';
import { AuditService } from '../../audit/audit.service';
import { CurrentProductScope, type ProductScope } from '../../common/auth/actor';
import { LicensesService } from '../../licenses/licenses.service';
import { TrialsService } from '../../licenses/trials/trials.service';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import type { Product } from '../../products/product.entity';
import { ProductsService } from '../../products/products.service';
import { StatsService } from '../../stats/stats.service';
import { StoreEventsService } from '../../stores/store-events.service';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { CHART_DAYS, CHART_SERIES, dailyChart } from '../views/daily-chart';
import { withLicenses } from './audit.controller';
import { EXPIRING_SOON_DAYS } from './license-list';

const EXPIRING_PANEL_SIZE = 10;

/** The products a limited account's statistics count, by name: "ERP Suite (ERP_SUITE)", "A (A) and B (B)". */
function productsLabel(products: readonly Pick<Product, 'code' | 'name'>[]): string {
  const names = products.map((p) => `${p.name} (${p.code})`);
  if (names.length === 0) return 'no product';
  return names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}
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
    private readonly products: ProductsService,
  ) {}

  /**
   * Start page: per-product statistics, one product's (or every product's) events per day with week and month totals,
   * store events needing attention, the licences expiring soonest, and the latest audit entries.
   */
  @Get('dashboard')
  @Render('dashboard')
  async overview(@Query() query: Record<string, unknown>, @CurrentProductScope() scope: ProductScope) {
    // Every panel counts the account's products; one limited to some reads their names where others read "all
    // products". Store events belong to no product: that panel is for accounts of every product (docs/dashboard.md,
    // Limited accounts).
    const everyProduct = scope === null;
    const visible = await this.products.listProducts(scope);
    const shown = everyProduct ? null : productsLabel(visible);
    const [products, recent, expiring, trialIps, daily, expiringDaily, storeAttention, productDaily] = await Promise.all([
      this.stats.productStats(scope),
      this.audit.listEntries({ limit: 10, offset: 0 }, scope),
      this.licenses.listLicensesForStaff(
        { expiring_within_days: EXPIRING_SOON_DAYS, limit: EXPIRING_PANEL_SIZE, offset: 0 },
        { sort: 'expires_at', direction: 'asc' },
        scope,
      ),
      this.trials.busiestIps(TRIAL_IP_HOURS, TRIAL_IP_ROWS, scope),
      this.audit.dailyCounts(
        CHART_SERIES.map((s) => s.key),
        CHART_DAYS,
        { productIds: scope },
      ),
      this.stats.expiringPerDay(CHART_DAYS, scope),
      everyProduct ? this.storeEvents.countNeedingAttention() : 0,
      this.productDaily(query.product, scope, visible, shown),
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
      storeAttention: everyProduct && (storeConnected || storeAttention > 0) ? { count: storeAttention } : null,
      // The products the page counts, named, for an account limited to some (null: every product).
      productsShown: shown,
      expiring: expiring.items,
      expiringTotal: expiring.total,
      expiringDays: EXPIRING_SOON_DAYS,
      trialIps: trialIps.map((row) => ({ ...row, href: `/licenses?${new URLSearchParams({ trial_ip: row.ip }).toString()}` })),
      trialIpHours: TRIAL_IP_HOURS,
      chartDays: CHART_DAYS,
      expiringChart: dailyChart(
        `Usable licences${shown ? ` of ${shown}` : ''} expiring per UTC day, today and the next ${CHART_DAYS - 1} days`,
        [{ key: 'expiring', label: 'Expiring' }],
        expiringDaily,
      ),
      daily: dailyChart(
        `Activations, refusals and new licences${shown ? ` of ${shown}` : ''} per UTC day, last ${CHART_DAYS} days, oldest first`,
        CHART_SERIES,
        daily,
      ),
      productDaily: {
        ...productDaily,
        everyLabel: shown ?? 'All products',
        options: visible.map((p) => ({ code: p.code, name: p.name, selected: p.code === productDaily.code })),
      },
      recent: await withLicenses(recent.items, this.licenses),
    };
  }

  /**
   * The per-product panel: a product's (an unknown or absent code: every product's) daily statistics of the last 30
   * UTC days as a chart and table, with the last 7 and 30 days' totals (docs/dashboard.md, Statistics per product).
   */
  private async productDaily(requested: unknown, scope: ProductScope, visible: Product[], shown: string | null) {
    const wanted = typeof requested === 'string' ? requested.trim().toUpperCase() : '';
    // A product outside a limited account's products reads as an unknown one: every product it may see.
    const product = wanted === '' ? undefined : visible.find((p) => p.code === wanted);
    const code = product ? wanted : null;
    const rows = await this.stats.daily(code ? { product: code } : {}, scope);
    const total = (days: number) =>
      Object.fromEntries(DAILY_SERIES.map((s) => [s.key, rows.slice(-days).reduce((sum, row) => sum + row[s.key], 0)])) as Record<
        DailyKey,
        number
      >;
    const label = code ?? shown ?? 'all products';
    return {
      code,
      label,
      totals: [
        { period: 'Last 7 days', counts: DAILY_SERIES.map((s) => ({ label: s.label, n: total(7)[s.key] })) },
        { period: `Last ${CHART_DAYS} days`, counts: DAILY_SERIES.map((s) => ({ label: s.label, n: total(CHART_DAYS)[s.key] })) },
      ],
      columns: DAILY_SERIES.map((s) => s.label),
      chart: dailyChart(
        `Events of ${label} per UTC day, last ${CHART_DAYS} days, oldest first`,
        DAILY_SERIES,
        rows.map(({ day, ...counts }) => ({ day, counts })),
      ),
    };
  }
}

/** The daily statistics' columns as the per-product panel shows them (docs/licences.md, Daily statistics). */
const DAILY_SERIES = [
  { key: 'activations', label: 'Activations' },
  { key: 'refusals', label: 'Refusals' },
  { key: 'deactivations', label: 'Deactivations' },
  { key: 'trials', label: 'Trials' },
  { key: 'new_licences', label: 'New licences' },
] as const;
type DailyKey = (typeof DAILY_SERIES)[number]['key'];
