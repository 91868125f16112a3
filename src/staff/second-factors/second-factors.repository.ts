import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';

/** A passkey as sign-in needs it. */
export interface PasskeyRow {
  id: number;
  user_id: number;
  credential_id: string;
  public_key: Buffer;
  counter: string;
  transports: string;
}

/**
 * The staff's second factors: TOTP secrets, recovery codes and passkeys (docs/dashboard.md, Second factors). Named
 * SQL with typed rows (docs/architecture.md, Database style); every write that must not race is one statement.
 */
@Injectable()
export class SecondFactorsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private db(manager?: EntityManager) {
    return manager ?? this.dataSource.manager;
  }

  /** Replaces any unconfirmed secret; a confirmed one stays until reset. False when a confirmed one exists. */
  async saveUnconfirmedTotp(userId: number, envelope: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `INSERT INTO staff_totp_secrets (user_id, secret_envelope) VALUES ($1, $2)
       ON CONFLICT (user_id) DO UPDATE SET secret_envelope = EXCLUDED.secret_envelope, created_at = now(), last_used_step = NULL
         WHERE staff_totp_secrets.confirmed_at IS NULL
       RETURNING user_id`,
      [userId, envelope],
    );
    return rows.length === 1;
  }

  async getTotp(userId: number): Promise<{ envelope: string; confirmed: boolean } | null> {
    const rows = await this.dataSource.query<{ secret_envelope: string; confirmed: boolean }[]>(
      `SELECT secret_envelope, confirmed_at IS NOT NULL AS confirmed FROM staff_totp_secrets WHERE user_id = $1`,
      [userId],
    );
    return rows.length ? { envelope: rows[0].secret_envelope, confirmed: rows[0].confirmed } : null;
  }

  /** Records `step` as used when it is later than the last one, atomically across instances; false for a replay. */
  async useTotpStep(userId: number, step: number, manager?: EntityManager): Promise<boolean> {
    const rows: unknown[] = await this.db(manager).query(
      `UPDATE staff_totp_secrets SET last_used_step = $2
       WHERE user_id = $1 AND (last_used_step IS NULL OR last_used_step < $2) RETURNING user_id`,
      [userId, step],
    );
    return rowCount(rows) === 1;
  }

  async confirmTotp(userId: number, manager: EntityManager): Promise<boolean> {
    const rows: unknown[] = await manager.query(
      `UPDATE staff_totp_secrets SET confirmed_at = now() WHERE user_id = $1 AND confirmed_at IS NULL RETURNING user_id`,
      [userId],
    );
    return rowCount(rows) === 1;
  }

  /** The account's recovery codes become exactly these (any older ones stop working). */
  async replaceRecoveryCodes(userId: number, hashes: string[], manager: EntityManager): Promise<void> {
    await manager.query(`DELETE FROM staff_recovery_codes WHERE user_id = $1`, [userId]);
    await manager.query(`INSERT INTO staff_recovery_codes (user_id, code_hash) SELECT $1, unnest($2::varchar[])`, [userId, hashes]);
  }

  /** Marks an unused code used; false when it is unknown or already used (one statement: two tabs cannot both use it). */
  async useRecoveryCode(userId: number, hash: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `UPDATE staff_recovery_codes SET used_at = now() WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL RETURNING id`,
      [userId, hash],
    );
    return rowCount(rows) === 1;
  }

  async unusedRecoveryCodes(userId: number): Promise<number> {
    const [{ n }] = await this.dataSource.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM staff_recovery_codes WHERE user_id = $1 AND used_at IS NULL`,
      [userId],
    );
    return n;
  }

  /** Which kinds of second factor an account has: 'totp' (confirmed) and 'passkey'. */
  async factorsOf(userId: number): Promise<('totp' | 'passkey')[]> {
    return (await this.factorsByUser([userId])).get(userId) ?? [];
  }

  /** Which kinds of second factor each account has: 'totp' (confirmed) and 'passkey'. */
  async factorsByUser(userIds: number[]): Promise<Map<number, ('totp' | 'passkey')[]>> {
    const rows = await this.dataSource.query<{ user_id: number; totp: boolean; passkey: boolean }[]>(
      `SELECT u.id AS user_id,
              EXISTS (SELECT 1 FROM staff_totp_secrets t WHERE t.user_id = u.id AND t.confirmed_at IS NOT NULL) AS totp,
              EXISTS (SELECT 1 FROM staff_passkeys p WHERE p.user_id = u.id) AS passkey
       FROM unnest($1::int[]) AS u(id)`,
      [userIds],
    );
    return new Map(rows.map((r) => [r.user_id, [...(r.totp ? (['totp'] as const) : []), ...(r.passkey ? (['passkey'] as const) : [])]]));
  }

  async addPasskey(
    userId: number,
    p: { credentialId: string; publicKey: Buffer; counter: number; transports: string },
    manager: EntityManager,
  ) {
    await manager.query(
      `INSERT INTO staff_passkeys (user_id, credential_id, public_key, counter, transports) VALUES ($1, $2, $3, $4, $5)`,
      [userId, p.credentialId, p.publicKey, p.counter, p.transports],
    );
  }

  async passkeysOf(userId: number): Promise<PasskeyRow[]> {
    return this.dataSource.query<PasskeyRow[]>(`SELECT ${PASSKEY_COLUMNS} FROM staff_passkeys WHERE user_id = $1 ORDER BY id`, [userId]);
  }

  async passkeyByCredentialId(credentialId: string): Promise<PasskeyRow | null> {
    const rows = await this.dataSource.query<PasskeyRow[]>(`SELECT ${PASSKEY_COLUMNS} FROM staff_passkeys WHERE credential_id = $1`, [
      credentialId,
    ]);
    return rows[0] ?? null;
  }

  /** Stores the authenticator's new signature counter, only forward (a cloned authenticator shows an old one). */
  async usePasskey(id: number, counter: number): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `UPDATE staff_passkeys SET counter = $2, last_used_at = now() WHERE id = $1 AND (counter < $2 OR $2 = 0) RETURNING id`,
      [id, counter],
    );
    return rowCount(rows) === 1;
  }

  /** Removes the account's authenticator app and its recovery codes; true when it had one. */
  async deleteTotp(userId: number, manager: EntityManager): Promise<boolean> {
    const totp = await manager.query<unknown[]>(`DELETE FROM staff_totp_secrets WHERE user_id = $1 RETURNING user_id`, [userId]);
    await manager.query(`DELETE FROM staff_recovery_codes WHERE user_id = $1`, [userId]);
    return rowCount(totp) > 0;
  }

  /** Removes one passkey of the account; false when it has none by this id. */
  async deletePasskey(userId: number, id: number, manager: EntityManager): Promise<boolean> {
    const rows = await manager.query<unknown[]>(`DELETE FROM staff_passkeys WHERE user_id = $1 AND id = $2 RETURNING id`, [userId, id]);
    return rowCount(rows) > 0;
  }

  /** Removes every second factor of the account; true when there was any. */
  async deleteAll(userId: number, manager: EntityManager): Promise<boolean> {
    const [totp, codes, passkeys] = await Promise.all(
      ['staff_totp_secrets', 'staff_recovery_codes', 'staff_passkeys'].map((table) =>
        manager.query<unknown[]>(`DELETE FROM ${table} WHERE user_id = $1 RETURNING user_id`, [userId]),
      ),
    );
    return rowCount(totp) + rowCount(codes) + rowCount(passkeys) > 0;
  }

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }
}

const PASSKEY_COLUMNS = 'id, user_id, credential_id, public_key, counter, transports';

/** typeorm's query() answers an UPDATE ... RETURNING with [rows, count]; an INSERT/DELETE with the rows. */
function rowCount(result: unknown[]): number {
  return Array.isArray(result[0]) ? (result[0] as unknown[]).length : result.length;
}
