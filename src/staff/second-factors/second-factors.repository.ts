import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { param, raw, runStatement, sql } from '../../database/statement';

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
    const rows = await runStatement<{ user_id: number }>(
      this.dataSource.manager,
      'second-factors-save-unconfirmed-totp',
      sql`INSERT INTO staff_totp_secrets (user_id, secret_envelope) VALUES (${userId}, ${envelope})
       ON CONFLICT (user_id) DO UPDATE SET secret_envelope = EXCLUDED.secret_envelope, created_at = now(), last_used_step = NULL
         WHERE staff_totp_secrets.confirmed_at IS NULL
       RETURNING user_id`,
    );
    return rows.length === 1;
  }

  async getTotp(userId: number): Promise<{ envelope: string; confirmed: boolean } | null> {
    const rows = await runStatement<{ secret_envelope: string; confirmed: boolean }>(
      this.dataSource.manager,
      'second-factors-get-totp',
      sql`SELECT secret_envelope, confirmed_at IS NOT NULL AS confirmed FROM staff_totp_secrets WHERE user_id = ${userId}`,
    );
    return rows.length ? { envelope: rows[0].secret_envelope, confirmed: rows[0].confirmed } : null;
  }

  /** Records `step` as used when it is later than the last one, atomically across instances; false for a replay. */
  async useTotpStep(userId: number, step: number, manager?: EntityManager): Promise<boolean> {
    const stepParam = param(step);
    const rows = await runStatement<{ user_id: number }>(
      this.db(manager),
      'second-factors-use-totp-step',
      sql`UPDATE staff_totp_secrets SET last_used_step = ${stepParam}
       WHERE user_id = ${userId} AND (last_used_step IS NULL OR last_used_step < ${stepParam}) RETURNING user_id`,
    );
    return rows.length === 1;
  }

  async confirmTotp(userId: number, manager: EntityManager): Promise<boolean> {
    const rows = await runStatement<{ user_id: number }>(
      manager,
      'second-factors-confirm-totp',
      sql`UPDATE staff_totp_secrets SET confirmed_at = now() WHERE user_id = ${userId} AND confirmed_at IS NULL RETURNING user_id`,
    );
    return rows.length === 1;
  }

  /** The account's recovery codes become exactly these (any older ones stop working). */
  async replaceRecoveryCodes(userId: number, hashes: string[], manager: EntityManager): Promise<void> {
    await runStatement(manager, 'second-factors-delete-recovery-codes', sql`DELETE FROM staff_recovery_codes WHERE user_id = ${userId}`);
    await runStatement(
      manager,
      'second-factors-insert-recovery-codes',
      sql`INSERT INTO staff_recovery_codes (user_id, code_hash) SELECT ${userId}, unnest(${hashes}::varchar[])`,
    );
  }

  /** Marks an unused code used; false when it is unknown or already used (one statement: two tabs cannot both use it). */
  async useRecoveryCode(userId: number, hash: string): Promise<boolean> {
    const rows = await runStatement<{ id: number }>(
      this.dataSource.manager,
      'second-factors-use-recovery-code',
      sql`UPDATE staff_recovery_codes SET used_at = now() WHERE user_id = ${userId} AND code_hash = ${hash} AND used_at IS NULL RETURNING id`,
    );
    return rows.length === 1;
  }

  async unusedRecoveryCodes(userId: number): Promise<number> {
    const [{ n }] = await runStatement<{ n: number }>(
      this.dataSource.manager,
      'second-factors-unused-recovery-codes',
      sql`SELECT count(*)::int AS n FROM staff_recovery_codes WHERE user_id = ${userId} AND used_at IS NULL`,
    );
    return n;
  }

  /** Which kinds of second factor an account has: 'totp' (confirmed) and 'passkey'. */
  async factorsOf(userId: number): Promise<('totp' | 'passkey')[]> {
    return (await this.factorsByUser([userId])).get(userId) ?? [];
  }

  /** Which kinds of second factor each account has: 'totp' (confirmed) and 'passkey'. */
  async factorsByUser(userIds: number[]): Promise<Map<number, ('totp' | 'passkey')[]>> {
    const rows = await runStatement<{ user_id: number; totp: boolean; passkey: boolean }>(
      this.dataSource.manager,
      'second-factors-factors-by-user',
      sql`SELECT u.id AS user_id,
              EXISTS (SELECT 1 FROM staff_totp_secrets t WHERE t.user_id = u.id AND t.confirmed_at IS NOT NULL) AS totp,
              EXISTS (SELECT 1 FROM staff_passkeys p WHERE p.user_id = u.id) AS passkey
       FROM unnest(${userIds}::int[]) AS u(id)`,
    );
    return new Map(rows.map((r) => [r.user_id, [...(r.totp ? (['totp'] as const) : []), ...(r.passkey ? (['passkey'] as const) : [])]]));
  }

  async addPasskey(
    userId: number,
    p: { credentialId: string; publicKey: Buffer; counter: number; transports: string },
    manager: EntityManager,
  ) {
    await runStatement(
      manager,
      'second-factors-add-passkey',
      sql`INSERT INTO staff_passkeys (user_id, credential_id, public_key, counter, transports) VALUES (${userId}, ${p.credentialId}, ${p.publicKey}, ${p.counter}, ${p.transports})`,
    );
  }

  async passkeysOf(userId: number): Promise<PasskeyRow[]> {
    return runStatement<PasskeyRow>(
      this.dataSource.manager,
      'second-factors-passkeys-of',
      sql`SELECT ${raw(PASSKEY_COLUMNS)} FROM staff_passkeys WHERE user_id = ${userId} ORDER BY id`,
    );
  }

  async passkeyByCredentialId(credentialId: string): Promise<PasskeyRow | null> {
    const rows = await runStatement<PasskeyRow>(
      this.dataSource.manager,
      'second-factors-passkey-by-credential-id',
      sql`SELECT ${raw(PASSKEY_COLUMNS)} FROM staff_passkeys WHERE credential_id = ${credentialId}`,
    );
    return rows[0] ?? null;
  }

  /** Stores the authenticator's new signature counter, only forward (a cloned authenticator shows an old one). */
  async usePasskey(id: number, counter: number): Promise<boolean> {
    const counterParam = param(counter);
    const rows = await runStatement<{ id: number }>(
      this.dataSource.manager,
      'second-factors-use-passkey',
      sql`UPDATE staff_passkeys SET counter = ${counterParam}, last_used_at = now() WHERE id = ${id} AND (counter < ${counterParam} OR ${counterParam} = 0) RETURNING id`,
    );
    return rows.length === 1;
  }

  /** Removes the account's authenticator app and its recovery codes; true when it had one. */
  async deleteTotp(userId: number, manager: EntityManager): Promise<boolean> {
    const totp = await runStatement<{ user_id: number }>(
      manager,
      'second-factors-delete-totp',
      sql`DELETE FROM staff_totp_secrets WHERE user_id = ${userId} RETURNING user_id`,
    );
    await runStatement(manager, 'second-factors-delete-recovery-codes', sql`DELETE FROM staff_recovery_codes WHERE user_id = ${userId}`);
    return totp.length > 0;
  }

  /** Removes one passkey of the account; false when it has none by this id. */
  async deletePasskey(userId: number, id: number, manager: EntityManager): Promise<boolean> {
    const rows = await runStatement<{ id: number }>(
      manager,
      'second-factors-delete-passkey',
      sql`DELETE FROM staff_passkeys WHERE user_id = ${userId} AND id = ${id} RETURNING id`,
    );
    return rows.length > 0;
  }

  /** Removes every second factor of the account; true when there was any. */
  async deleteAll(userId: number, manager: EntityManager): Promise<boolean> {
    const [totp, codes, passkeys] = await Promise.all(
      ['staff_totp_secrets', 'staff_recovery_codes', 'staff_passkeys'].map((table) =>
        runStatement<{ user_id: number }>(
          manager,
          `second-factors-delete-all-${table}`,
          sql`DELETE FROM ${raw(table)} WHERE user_id = ${userId} RETURNING user_id`,
        ),
      ),
    );
    return totp.length + codes.length + passkeys.length > 0;
  }

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }
}

const PASSKEY_COLUMNS = 'id, user_id, credential_id, public_key, counter, transports';
