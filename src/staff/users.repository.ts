import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { rowShape, type RowOf } from '../database/row-shape';
import { param, raw, runStatement, sql } from '../database/statement';
import type { StaffRole } from './roles';
import { User } from './user.entity';

/** What an owner may change about an account (docs/dashboard.md, Staff and roles). */
export interface AccountAccess {
  role: StaffRole;
  productIds: number[] | null;
  disabled: boolean;
}

/**
 * Staff accounts (the users table); usernames are unique case-insensitively (index on lower(username)). Style: named
 * SQL with typed rows (docs/architecture.md, Database style).
 */
@Injectable()
export class UsersRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async getById(id: number, manager?: EntityManager): Promise<User | null> {
    const rows = await runStatement<UserRow>(
      manager ?? this.dataSource.manager,
      'users-get-by-id',
      sql`SELECT ${raw(USER_COLUMNS)} FROM users WHERE id = ${id}`,
    );
    return rows.length ? USER_ROWS.fromRow(rows[0]) : null;
  }

  async getByUsername(username: string): Promise<User | null> {
    const rows = await runStatement<UserRow>(
      this.dataSource.manager,
      'users-get-by-username',
      sql`SELECT ${raw(USER_COLUMNS)} FROM users WHERE lower(username) = lower(${username})`,
    );
    return rows.length ? USER_ROWS.fromRow(rows[0]) : null;
  }

  async list(): Promise<User[]> {
    const rows = await runStatement<UserRow>(
      this.dataSource.manager,
      'users-list',
      sql`SELECT ${raw(USER_COLUMNS)} FROM users ORDER BY lower(username)`,
    );
    return rows.map(USER_ROWS.fromRow);
  }

  async exists(): Promise<boolean> {
    const [{ any }] = await runStatement<{ any: boolean }>(
      this.dataSource.manager,
      'users-exists',
      sql`SELECT EXISTS (SELECT 1 FROM users) AS any`,
    );
    return any;
  }

  /** Creates the user with `role`, or replaces the password of an existing one (same name, any case; its role stays); true when created. */
  async upsertPassword(username: string, passwordHash: string, role: StaffRole, manager: EntityManager): Promise<boolean> {
    const rows = await runStatement<{ created: boolean }>(
      manager,
      'users-upsert-password',
      sql`INSERT INTO users (username, password_hash, role) VALUES (${username}, ${passwordHash}, ${role})
       ON CONFLICT (lower(username)) DO UPDATE SET password_hash = EXCLUDED.password_hash
       RETURNING (xmax = 0) AS created`,
    );
    return rows[0].created;
  }

  /** A new account with a password (`licence-server user create`); false when the name is taken (any case). */
  async insertWithPassword(
    manager: EntityManager,
    account: { username: string; passwordHash: string; role: StaffRole; productIds: number[] | null },
  ): Promise<boolean> {
    const rows = await runStatement<{ id: number }>(
      manager,
      'users-insert-with-password',
      sql`INSERT INTO users (username, password_hash, role, product_ids) VALUES (${account.username}, ${account.passwordHash}, ${account.role}, ${account.productIds})
       ON CONFLICT (lower(username)) DO NOTHING RETURNING id`,
    );
    return rows.length === 1;
  }

  /** Replaces the password of an existing account (`licence-server user reset`); false when there is none of that name. */
  async replacePassword(username: string, passwordHash: string, manager: EntityManager): Promise<boolean> {
    const rows = await runStatement<{ id: number }>(
      manager,
      'users-replace-password',
      sql`WITH changed AS (UPDATE users SET password_hash = ${passwordHash} WHERE lower(username) = lower(${username}) RETURNING id) SELECT id FROM changed`,
    );
    return rows.length === 1;
  }

  /** Inserts an owner only when no user exists yet; false when another instance got there first. */
  async insertFirst(username: string, passwordHash: string, manager: EntityManager): Promise<boolean> {
    const rows = await runStatement<{ id: number }>(
      manager,
      'users-insert-first',
      sql`INSERT INTO users (username, password_hash, role) SELECT ${username}, ${passwordHash}, 'owner' WHERE NOT EXISTS (SELECT 1 FROM users)
       ON CONFLICT (lower(username)) DO NOTHING RETURNING id`,
    );
    return rows.length === 1;
  }

  /** A new account from an accepted invitation; null when the name is taken (any case). */
  async insertInvited(
    manager: EntityManager,
    account: { username: string; passwordHash: string; email: string; role: StaffRole; productIds: number[] | null },
  ): Promise<User | null> {
    const rows = await runStatement<UserRow>(
      manager,
      'users-insert-invited',
      sql`INSERT INTO users (username, password_hash, email, role, product_ids) VALUES (${account.username}, ${account.passwordHash}, ${account.email}, ${account.role}, ${account.productIds})
       ON CONFLICT (lower(username)) DO NOTHING RETURNING ${raw(USER_COLUMNS)}`,
    );
    return rows.length ? USER_ROWS.fromRow(rows[0]) : null;
  }

  /**
   * Locks the rows of the enabled owners of every product (an owner limited to some products does not count: docs/security.md,
   * Owners) (in id order, so two owners changing each other cannot deadlock) and returns their
   * ids: the "one enabled owner remains" rule is checked against rows no other transaction can change meanwhile.
   */
  async lockEnabledOwners(manager: EntityManager): Promise<number[]> {
    const rows = await runStatement<{ id: number }>(
      manager,
      'users-lock-enabled-owners',
      sql`SELECT id FROM users WHERE role = 'owner' AND NOT disabled AND product_ids IS NULL ORDER BY id FOR UPDATE`,
    );
    return rows.map((r) => r.id);
  }

  async lockById(manager: EntityManager, id: number): Promise<User | null> {
    const rows = await runStatement<UserRow>(
      manager,
      'users-lock-by-id',
      sql`SELECT ${raw(USER_COLUMNS)} FROM users WHERE id = ${id} FOR UPDATE`,
    );
    return rows.length ? USER_ROWS.fromRow(rows[0]) : null;
  }

  /** Sets role, products and disabled, and ends the account's sessions (a new session generation). */
  async setAccess(manager: EntityManager, id: number, access: AccountAccess): Promise<void> {
    await runStatement(
      manager,
      'users-set-access',
      sql`UPDATE users SET role = ${access.role}, product_ids = ${access.productIds}, disabled = ${access.disabled}, session_generation = session_generation + 1 WHERE id = ${id}`,
    );
  }

  /** Ends the account's sessions on every instance: each request compares the generation it signed in with. */
  async endSessions(manager: EntityManager, id: number): Promise<void> {
    await runStatement(manager, 'users-end-sessions', sql`UPDATE users SET session_generation = session_generation + 1 WHERE id = ${id}`);
  }

  /** A single sign-on account (no password); null when the name is taken. */
  async insertWithoutPassword(username: string, role: StaffRole, manager: EntityManager): Promise<number | null> {
    const rows = await runStatement<{ id: number }>(
      manager,
      'users-insert-without-password',
      sql`INSERT INTO users (username, password_hash, role) VALUES (${username}, NULL, ${role}) ON CONFLICT (lower(username)) DO NOTHING RETURNING id`,
    );
    return rows[0]?.id ?? null;
  }

  /**
   * Gives a single sign-on account the role its provider names now, except that the last enabled owner stays owner;
   * the account's role and disabled flag after it, or null when it is not a single sign-on account.
   */
  async syncSsoRole(
    id: number,
    role: StaffRole,
    manager: EntityManager,
  ): Promise<{ username: string; previous: StaffRole; role: StaffRole; disabled: boolean } | null> {
    const idParam = param(id);
    const roleParam = param(role);
    const rows = await runStatement<{ username: string; previous: StaffRole; role: StaffRole; disabled: boolean }>(
      manager,
      'users-sync-sso-role',
      sql`WITH target AS (SELECT id, role FROM users WHERE id = ${idParam} AND password_hash IS NULL FOR UPDATE),
       updated AS (
         UPDATE users u SET role = CASE
             WHEN t.role = 'owner' AND ${roleParam} <> 'owner'
              AND NOT EXISTS (
                SELECT 1 FROM users o WHERE o.role = 'owner' AND NOT o.disabled AND o.product_ids IS NULL AND o.id <> ${idParam}
              ) THEN t.role
             ELSE ${roleParam} END
         FROM target t WHERE u.id = t.id RETURNING u.username, t.role AS previous, u.role, u.disabled
       )
       SELECT username, previous, role, disabled FROM updated`,
    );
    return rows[0] ?? null;
  }

  async touchLastSignIn(id: number, manager?: EntityManager): Promise<void> {
    await runStatement(
      manager ?? this.dataSource.manager,
      'users-touch-last-sign-in',
      sql`UPDATE users SET last_sign_in_at = now() WHERE id = ${id}`,
    );
  }

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }
}

/** A users row read into a User. */
const USER_ROWS = rowShape(
  () => new User(),
  'id, username, password_hash, role, product_ids, email, disabled, session_generation, created_at, last_sign_in_at',
);

const USER_COLUMNS = USER_ROWS.columns;

type UserRow = RowOf<typeof USER_ROWS>;
