import type { EntityManager } from 'typeorm';

/**
 * Takes a transaction-level advisory lock: changes under the same key run one at a time, and the lock ends with the
 * transaction. A lock, not a table access, so it sits outside a repository's style (docs/architecture.md, Database
 * style). A number is the lock's key itself; a string is hashed by PostgreSQL (hashtext) into one.
 */
export async function lockForTransaction(manager: EntityManager, key: number | string): Promise<void> {
  if (typeof key === 'number') await manager.query('SELECT pg_advisory_xact_lock($1)', [key]);
  else await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [key]);
}
