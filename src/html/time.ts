/** Times as the server renders them in any page, staff's or customer's; the browser's script turns them into local time. */

/** 2025-01-31 14:05 UTC: the server's rendering; the browser's script turns it into local and relative time. */
export function formatTimestamp(value: unknown): string {
  const date = toDate(value);
  return date ? `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC` : '—';
}

export function isoTimestamp(value: unknown): string {
  return toDate(value)?.toISOString() ?? '';
}

function toDate(value: unknown): Date | null {
  const date = value instanceof Date ? value : typeof value === 'string' && value ? new Date(value) : null;
  return date && !Number.isNaN(date.getTime()) ? date : null;
}
