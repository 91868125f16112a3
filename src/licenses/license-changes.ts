import { snakeCase } from '../common/names';
import type { License } from './license.entity';

/** A field's change as the audit entry and the webhook show it. */
export type FieldChange = { from: unknown; to: unknown };

/** The JSON form of a field's value: dates as ISO text, objects with their keys sorted (limits compare regardless of key order). */
export function changeValue(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (value && typeof value === 'object' && !Array.isArray(value))
    return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)));
  return value ?? null;
}

/**
 * The `changes` of a licence event (docs/licences.md, Changing (PUT)): each of `next`'s fields whose value differs from the
 * licence's, under its JSON name, as {from, to}. The one diff every licence change uses, whoever asks.
 */
export function licenseChanges(license: License, next: Partial<License>): Record<string, FieldChange> {
  const changes: Record<string, FieldChange> = {};
  for (const [key, value] of Object.entries(next)) {
    if (value === undefined) continue;
    const from = changeValue(license[key as keyof License]);
    const to = changeValue(value);
    if (JSON.stringify(from) !== JSON.stringify(to)) changes[snakeCase(key)] = { from, to };
  }
  return changes;
}
