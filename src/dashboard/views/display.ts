/** How the dashboard shows stored values to staff: pure functions, unit-tested, used as Handlebars helpers. */
import { formatTimestamp } from '../../html/time';

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
const FINGERPRINT = /^sha256:[0-9a-f]{64}$/;

/** sha256:4f2a9c…d81e07: enough to tell machines apart; the full value goes in a title attribute. */
export function shortFingerprint(value: unknown): unknown {
  return typeof value === 'string' && value.length > 26 ? `${value.slice(0, 13)}…${value.slice(-6)}` : value;
}

/** An IPv4 client seen through an IPv6 socket (::ffff:203.0.113.7) is shown as the IPv4 address it is. */
export function displayIp(value: unknown): string {
  if (typeof value !== 'string') return '';
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(value);
  return mapped ? mapped[1] : value;
}

export interface DetailLine {
  name: string;
  value: string;
  /** The full value, when `value` is shortened. */
  title?: string;
}

/** One value of an audit entry in words: dates as days, fingerprints shortened, lists and maps inline. */
function displayValue(value: unknown): { value: string; title?: string } {
  if (value === null || value === undefined) return { value: '—' };
  if (typeof value === 'string') {
    if (FINGERPRINT.test(value)) return { value: String(shortFingerprint(value)), title: value };
    if (ISO_TIMESTAMP.test(value)) return { value: value.slice(0, 10), title: formatTimestamp(value) };
    return { value };
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return { value: 'none' };
    const parts = value.map((v) => displayValue(v));
    const titles = parts.filter((p) => p.title).map((p) => p.title);
    return { value: parts.map((p) => p.value).join(', '), title: titles.length ? titles.join(', ') : undefined };
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return { value: entries.length ? entries.map(([k, v]) => `${k} ${displayValue(v).value}`).join(', ') : 'none' };
  }
  // Audit details are JSON: what is left here is a number or a boolean (a symbol or function is only named).
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return { value: String(value) };
  return { value: typeof value };
}

/**
 * An audit entry's details as lines a person reads: each change as "field: old → new" (dates as days,
 * the exact value on hover), the rest as "name: value", with fingerprints shortened.
 */
export function auditDetailLines(details: unknown): DetailLine[] {
  if (!details || typeof details !== 'object') return [];
  const lines: DetailLine[] = [];
  for (const [name, raw] of Object.entries(details as Record<string, unknown>)) {
    if (name === 'changes' && raw && typeof raw === 'object') {
      for (const [field, change] of Object.entries(raw as Record<string, { from?: unknown; to?: unknown }>)) {
        const from = displayValue(change?.from);
        const to = displayValue(change?.to);
        const title = from.title || to.title ? `${from.title ?? from.value} → ${to.title ?? to.value}` : undefined;
        lines.push({ name: field, value: `${from.value} → ${to.value}`, title });
      }
      continue;
    }
    const shown = displayValue(raw);
    lines.push({ name: name.replace(/_/g, ' '), ...shown });
  }
  return lines;
}

/** The customer view's query for a licence row: its e-mail when it has one, else its PIB, else its name as a search. */
export function customerQuery(row: { customer_email?: string | null; customer_pib?: string | null; customer_name?: string }): string {
  if (row.customer_email) return new URLSearchParams({ email: row.customer_email }).toString();
  if (row.customer_pib) return new URLSearchParams({ pib: row.customer_pib }).toString();
  return new URLSearchParams({ name: row.customer_name ?? '' }).toString();
}

/** A licence key with all but its prefix and last group hidden, for lists a customer may show on screen (docs/portal.md). */
export function maskedKey(value: unknown): string {
  if (typeof value !== 'string') return '';
  const groups = value.split('-');
  if (groups.length < 3) return '•••••';
  return [groups[0], ...groups.slice(1, -1).map(() => '•••••'), groups[groups.length - 1]].join('-');
}
