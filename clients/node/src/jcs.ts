/**
 * RFC 8785 (JCS) canonical JSON, built in so the package has no runtime dependency (and so no dependency whose
 * `engines` differs from ours): members sorted by UTF-16 code units, ECMAScript number and string serialization.
 */
export function canonicalize(value: unknown): string {
  return serialize(value, new Set());
}

function serialize(value: unknown, ancestors: Set<object>): string {
  if (value === null || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('JCS has no NaN or Infinity');
    return JSON.stringify(value);
  }
  if (typeof value === 'string') return serializeString(value);
  if (typeof value !== 'object') throw new TypeError(`JCS cannot encode a ${typeof value}`);
  if (ancestors.has(value)) throw new TypeError('JCS cannot encode a circular structure');
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      return '[' + value.map((item: unknown) => (item === undefined ? 'null' : serialize(item, ancestors))).join(',') + ']';
    }
    const record = value as Record<string, unknown>;
    // Array.prototype.sort without a comparator compares UTF-16 code units, which is the order RFC 8785 requires.
    const members = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort()
      .map((key) => serializeString(key) + ':' + serialize(record[key], ancestors));
    return '{' + members.join(',') + '}';
  } finally {
    ancestors.delete(value);
  }
}

function serializeString(text: string): string {
  // RFC 8785 rejects lone surrogates; JSON.stringify would escape them instead of failing.
  if (/\p{Surrogate}/u.test(text)) throw new TypeError('JCS cannot encode a lone surrogate');
  return JSON.stringify(text);
}
