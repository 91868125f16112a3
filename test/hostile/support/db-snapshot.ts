/** A fingerprint of everything a request could change, in one round trip. */
export interface DbSnapshot {
  products: string;
  licenses: string;
  activations: string;
  users: string;
  /** Every audit entry except activation denials. */
  audit: string;
  /** `license.activation_denied` entries: the one write a refused, well-formed activation legitimately makes (docs/licences.md, Audit log). */
  denied: number;
  rows: number;
}

type Sql = <T = unknown>(query: string, params?: unknown[]) => Promise<T[]>;

const digest = (table: string, where = '') => `(SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t.id), '')) FROM ${table} t ${where})`;

export async function snapshot(sql: Sql): Promise<DbSnapshot> {
  const [row] = await sql<DbSnapshot>(
    `SELECT ${digest('products')} AS products, ${digest('licenses')} AS licenses, ${digest('activations')} AS activations,
            ${digest('users')} AS users, ${digest('audit_entries', "WHERE t.action <> 'license.activation_denied'")} AS audit,
            (SELECT count(*)::int FROM audit_entries WHERE action = 'license.activation_denied') AS denied,
            (SELECT (SELECT count(*) FROM products) + (SELECT count(*) FROM licenses) + (SELECT count(*) FROM activations) + (SELECT count(*) FROM audit_entries))::int AS rows`,
  );
  return row;
}

/** What changed between two snapshots, as readable words ("licenses changed", "denied +1"). */
export function changes(before: DbSnapshot, after: DbSnapshot): string[] {
  const out: string[] = [];
  for (const table of ['products', 'licenses', 'activations', 'users', 'audit'] as const)
    if (before[table] !== after[table]) out.push(`${table} changed`);
  if (after.denied !== before.denied) out.push(`denied ${after.denied - before.denied > 0 ? '+' : ''}${after.denied - before.denied}`);
  return out;
}
