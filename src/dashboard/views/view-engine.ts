import { readdirSync, readFileSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import hbs from 'hbs';
import { auditActor, auditSentence } from './audit-sentence';
import { formatTimestamp, isoTimestamp } from '../../html/time';
import { auditDetailLines, customerQuery, displayIp, maskedKey, shortFingerprint } from './display';


/** Helpers return plain strings, so Handlebars escapes them like any other value. */
const HELPERS: Record<string, (...args: unknown[]) => unknown> = {
  eq: (a: unknown, b: unknown) => a === b,
  not: (a: unknown) => !a,
  or: (...args: unknown[]) => args.slice(0, -1).some(Boolean),
  and: (...args: unknown[]) => args.slice(0, -1).every(Boolean),
  includes: (list: unknown, value: unknown) => Array.isArray(list) && list.includes(value),
  date: (value: unknown) => formatTimestamp(value),
  iso: (value: unknown) => isoTimestamp(value),
  shortFingerprint: (value: unknown) => shortFingerprint(value),
  ipAddress: (value: unknown) => displayIp(value),
  auditLines: (value: unknown) => auditDetailLines(value),
  auditSentence: (entry: unknown) => auditSentence((entry ?? {}) as Parameters<typeof auditSentence>[0]),
  auditActor: (entry: unknown) => auditActor((entry ?? {}) as Parameters<typeof auditActor>[0]),
  customerQuery: (row: unknown) => customerQuery(row ?? {}),
  count: (list: unknown) => (Array.isArray(list) ? list.length : 0),
  maskedKey: (value: unknown) => maskedKey(value),
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
