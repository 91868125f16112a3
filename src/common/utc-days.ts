const DAY_MS = 86_400_000;

/**
 * `days` consecutive UTC days as `YYYY-MM-DD`, starting `offset` days from the one containing `now` (negative: before),
 * with the start of the first and the end of the last, for a query's range (docs/dashboard.md, Charts).
 */
export function utcDays(now: Date, offset: number, days: number): { start: Date; end: Date; days: string[] } {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const start = new Date(today + offset * DAY_MS);
  return {
    start,
    end: new Date(start.getTime() + days * DAY_MS),
    days: Array.from({ length: days }, (_, i) => new Date(start.getTime() + i * DAY_MS).toISOString().slice(0, 10)),
  };
}

/** Per day of `days`, the `n` of each key from rows of (day, key, n); keys without a row count 0. */
export function countsByDay<K extends string>(
  days: string[],
  keys: readonly K[],
  rows: { day: string; key: string; n: number }[],
): { day: string; counts: Record<K, number> }[] {
  return days.map((day) => {
    const counts = Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>;
    for (const row of rows) if (row.day === day && keys.includes(row.key as K)) counts[row.key as K] = row.n;
    return { day, counts };
  });
}
