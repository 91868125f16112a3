/** One series of a daily chart: the key of its counts (an audit action, `expiring`) and its column heading. */
export interface ChartSeries<A extends string> {
  key: A;
  label: string;
}

/** What views/partials/daily-chart.hbs renders: a table per UTC day that the page script draws (docs/dashboard.md, Charts). */
export interface DailyChart {
  caption: string;
  columns: string[];
  rows: { day: string; values: { label: string; n: number }[] }[];
}

/** How many UTC days a chart shows, today included (docs/dashboard.md, Charts). */
export const CHART_DAYS = 30;

/** The client and staff events the charts count, in their column order. */
export const CHART_SERIES = [
  { key: 'license.activated', label: 'Activations' },
  { key: 'license.activation_denied', label: 'Refusals' },
  { key: 'license.created', label: 'New licences' },
] as const satisfies readonly ChartSeries<string>[];

/** AuditService.dailyCounts' days as the partial's table: one row a day, one cell a series. */
export function dailyChart<A extends string>(
  caption: string,
  series: readonly ChartSeries<A>[],
  days: { day: string; counts: Record<A, number> }[],
): DailyChart {
  return {
    caption,
    columns: series.map((s) => s.label),
    rows: days.map(({ day, counts }) => ({ day, values: series.map((s) => ({ label: s.label, n: counts[s.key] })) })),
  };
}
