import { readdirSync, readFileSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import hbs from 'hbs';

/** 2025-01-31 14:05 UTC: one unambiguous format for every timestamp on the dashboard. */
export function formatTimestamp(value: unknown): string {
  const date = value instanceof Date ? value : typeof value === 'string' && value ? new Date(value) : null;
  if (!date || Number.isNaN(date.getTime())) return '—';
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** Helpers return plain strings, so Handlebars escapes them like any other value. */
const HELPERS: Record<string, (...args: unknown[]) => unknown> = {
  eq: (a: unknown, b: unknown) => a === b,
  not: (a: unknown) => !a,
  or: (...args: unknown[]) => args.slice(0, -1).some(Boolean),
  includes: (list: unknown, value: unknown) => Array.isArray(list) && list.includes(value),
  date: (value: unknown) => formatTimestamp(value),
  /** sha256:4f2a9c…d81e07: enough to tell machines apart; the full value goes in a title attribute. */
  shortFingerprint: (value: unknown) => (typeof value === 'string' && value.length > 26 ? `${value.slice(0, 13)}…${value.slice(-6)}` : value),
  /** An audit entry's details as name/value lines; nested values as compact JSON. */
  fields: (value: unknown) =>
    value && typeof value === 'object'
      ? Object.entries(value).map(([name, v]) => ({ name, value: typeof v === 'string' ? v : JSON.stringify(v) }))
      : [],
  count: (list: unknown) => (Array.isArray(list) ? list.length : 0),
};

/**
 * The dashboard's own Handlebars instance (no global state shared between apps): helpers plus every
 * file in views/partials registered by name, synchronously, so the first request finds them.
 */
export function createViewEngine(viewsDir: string) {
  const instance = hbs.create();
  for (const [name, helper] of Object.entries(HELPERS)) instance.registerHelper(name, helper);
  const partialsDir = join(viewsDir, 'partials');
  for (const file of readdirSync(partialsDir)) {
    if (extname(file) === '.hbs') instance.registerPartial(basename(file, '.hbs'), readFileSync(join(partialsDir, file), 'utf8'));
  }
  return instance;
}
