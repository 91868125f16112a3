import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { lockForTransaction } from '../database/advisory-lock';
import { rowShape, type RowOf } from '../database/row-shape';
import { raw, runStatement, sql, type Sql } from '../database/statement';
import { type KeyEndorsement, StoredSigningKey } from './signing-key.entity';

// pg_advisory_xact_lock key for every keyring change: first-start import, rotation and revocation run one at a time.
const KEYRING_LOCK = 7_340_117_001;

/** A signing_keys row read into a StoredSigningKey (timestamptz as Date, jsonb parsed). */
const KEY_ROWS = rowShape(
  () => new StoredSigningKey(),
  'key_id, status, public_key_pem, private_key_encrypted, origin, algorithm, endorsements, created_at, retired_at, revoked_at',
);

const KEY_COLUMNS = KEY_ROWS.columns;

/**
 * The keyring's keys (signing_keys): a handful of rows read and written by key; changes run under one advisory lock.
 * Style: named SQL with typed rows (docs/architecture.md, Database style).
 */
@Injectable()
export class KeyringRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      await lockForTransaction(manager, KEYRING_LOCK);
      return work(manager);
    });
  }

  /**
   * Every key's id and state in one short string: the cheap read each instance polls to see a rotation or revocation
   * (a keyring holds a handful of keys, read without their key material).
   */
  async version(): Promise<string> {
    const keys = await runStatement<{ key_id: string; status: string; endorsements: number }>(
      this.dataSource.manager,
      'signing-keys-version',
      sql`SELECT key_id, status, jsonb_array_length(endorsements) AS endorsements FROM signing_keys`,
    );
    return keys
      .map((key) => `${key.key_id}:${key.status}:${key.endorsements}`)
      .sort()
      .join(',');
  }

  /** All keys, newest first (the admin list). */
  listAll(manager?: EntityManager): Promise<StoredSigningKey[]> {
    return this.keys(manager, 'signing-keys-list', sql`SELECT ${raw(KEY_COLUMNS)} FROM signing_keys ORDER BY created_at DESC, key_id`);
  }

  async count(manager: EntityManager): Promise<number> {
    const [{ count }] = await runStatement<{ count: number }>(
      manager,
      'signing-keys-count',
      sql`SELECT count(*)::int AS count FROM signing_keys`,
    );
    return count;
  }

  async getActive(manager?: EntityManager): Promise<StoredSigningKey | null> {
    const [key] = await this.keys(
      manager,
      'signing-keys-get-active',
      sql`SELECT ${raw(KEY_COLUMNS)} FROM signing_keys WHERE status = 'active'`,
    );
    return key ?? null;
  }

  async getByKeyId(keyId: string, manager?: EntityManager): Promise<StoredSigningKey | null> {
    const [key] = await this.keys(manager, 'signing-keys-get', sql`SELECT ${raw(KEY_COLUMNS)} FROM signing_keys WHERE key_id = ${keyId}`);
    return key ?? null;
  }

  async insert(key: Omit<StoredSigningKey, 'createdAt' | 'retiredAt' | 'revokedAt'>, manager: EntityManager): Promise<StoredSigningKey> {
    const [inserted] = await this.keys(
      manager,
      'signing-keys-insert',
      sql`INSERT INTO signing_keys (key_id, status, public_key_pem, private_key_encrypted, origin, algorithm, endorsements)
       VALUES (${key.keyId}, ${key.status}, ${key.publicKeyPem}, ${key.privateKeyEncrypted}, ${key.origin}, ${key.algorithm},
         ${JSON.stringify(key.endorsements)}::jsonb)
       RETURNING ${raw(KEY_COLUMNS)}`,
    );
    return inserted;
  }

  /** Active → retired: the private key is erased, the public key stays published. */
  async retire(keyId: string, manager: EntityManager): Promise<void> {
    await runStatement<{ key_id: string }>(
      manager,
      'signing-keys-retire',
      sql`UPDATE signing_keys SET status = 'retired', private_key_encrypted = NULL, retired_at = now()
       WHERE key_id = ${keyId} AND status = 'active' RETURNING key_id`,
    );
  }

  async setEndorsements(keyId: string, endorsements: KeyEndorsement[], manager: EntityManager): Promise<StoredSigningKey> {
    const [key] = await this.keys(
      manager,
      'signing-keys-set-endorsements',
      sql`UPDATE signing_keys SET endorsements = ${JSON.stringify(endorsements)}::jsonb WHERE key_id = ${keyId} RETURNING ${raw(KEY_COLUMNS)}`,
    );
    return key;
  }

  /** Retired → revoked; the key as it is stored either way. */
  async revoke(keyId: string, manager: EntityManager): Promise<StoredSigningKey> {
    const [key] = await this.keys(
      manager,
      'signing-keys-revoke',
      sql`UPDATE signing_keys SET status = 'revoked', revoked_at = now() WHERE key_id = ${keyId} AND status = 'retired' RETURNING ${raw(KEY_COLUMNS)}`,
    );
    return key ?? ((await this.getByKeyId(keyId, manager)) as StoredSigningKey);
  }

  private async keys(manager: EntityManager | undefined, name: string, statement: Sql): Promise<StoredSigningKey[]> {
    return (await runStatement<RowOf<typeof KEY_ROWS>>(manager ?? this.dataSource.manager, name, statement)).map(KEY_ROWS.fromRow);
  }
}
