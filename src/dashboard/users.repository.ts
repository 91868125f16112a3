import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { StaffRole } from '../staff/roles';
import { User } from '../staff/user.entity';

/**
 * Dashboard users; usernames are unique case-insensitively (index on lower(username)). Style: named SQL with typed
 * rows (docs/architecture.md, Database style).
 */
@Injectable()
export class UsersRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async getById(id: number): Promise<User | null> {
    const rows = await this.dataSource.query<UserRow[]>(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1`, [id]);
    return rows.length ? userFromRow(rows[0]) : null;
  }

  async getByUsername(username: string): Promise<User | null> {
    const rows = await this.dataSource.query<UserRow[]>(`SELECT ${USER_COLUMNS} FROM users WHERE lower(username) = lower($1)`, [username]);
    return rows.length ? userFromRow(rows[0]) : null;
  }

  async exists(): Promise<boolean> {
    const [{ any }] = await this.dataSource.query<{ any: boolean }[]>(`SELECT EXISTS (SELECT 1 FROM users) AS any`);
    return any;
  }

  /** Creates the user, or replaces the password of an existing one (same name, any case); true when created. */
  async upsertPassword(username: string, passwordHash: string): Promise<boolean> {
    const rows: { created: boolean }[] = await this.dataSource.query(
      `INSERT INTO users (username, password_hash, role) VALUES ($1, $2, 'owner')
       ON CONFLICT (lower(username)) DO UPDATE SET password_hash = EXCLUDED.password_hash
       RETURNING (xmax = 0) AS created`,
      [username, passwordHash],
    );
    return rows[0].created;
  }

  /** Inserts only when no user exists yet; false when another instance got there first. */
  async insertFirst(username: string, passwordHash: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `INSERT INTO users (username, password_hash, role) SELECT $1, $2, 'owner' WHERE NOT EXISTS (SELECT 1 FROM users)
       ON CONFLICT (lower(username)) DO NOTHING RETURNING id`,
      [username, passwordHash],
    );
    return rows.length === 1;
  }

  /** A single sign-on account (no password); null when the name is taken. */
  async insertWithoutPassword(username: string, role: StaffRole, manager: EntityManager): Promise<number | null> {
    const rows = await manager.query<{ id: number }[]>(
      `INSERT INTO users (username, password_hash, role) VALUES ($1, NULL, $2) ON CONFLICT (lower(username)) DO NOTHING RETURNING id`,
      [username, role],
    );
    return rows[0]?.id ?? null;
  }

  /**
   * Gives a single sign-on account the role its provider names now, except that the last enabled owner stays owner;
   * the account's role and disabled flag after it, or null when it is not a single sign-on account.
   */
  async syncSsoRole(id: number, role: StaffRole): Promise<{ role: StaffRole; disabled: boolean } | null> {
    const rows = await this.dataSource.query<{ role: StaffRole; disabled: boolean }[]>(
      `WITH target AS (SELECT id, role FROM users WHERE id = $1 AND password_hash IS NULL FOR UPDATE),
       updated AS (
         UPDATE users u SET role = CASE
             WHEN t.role = 'owner' AND $2 <> 'owner'
              AND NOT EXISTS (SELECT 1 FROM users o WHERE o.role = 'owner' AND NOT o.disabled AND o.id <> $1) THEN t.role
             ELSE $2 END
         FROM target t WHERE u.id = t.id RETURNING u.role, u.disabled
       )
       SELECT role, disabled FROM updated`,
      [id, role],
    );
    return rows[0] ?? null;
  }

  async touchLastLogin(id: number, manager?: EntityManager): Promise<void> {
    await (manager ?? this.dataSource.manager).query(`UPDATE users SET last_sign_in_at = now() WHERE id = $1`, [id]);
  }

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }
}

const USER_COLUMNS = 'id, username, password_hash, role, product_ids, email, disabled, session_generation, created_at, last_sign_in_at';

/** A users row as pg returns it. */
interface UserRow {
  id: number;
  username: string;
  password_hash: string | null;
  role: StaffRole;
  product_ids: number[] | null;
  email: string | null;
  disabled: boolean;
  session_generation: number;
  created_at: Date;
  last_sign_in_at: Date | null;
}

function userFromRow(r: UserRow): User {
  return Object.assign(new User(), {
    id: r.id,
    username: r.username,
    passwordHash: r.password_hash,
    role: r.role,
    productIds: r.product_ids,
    email: r.email,
    disabled: r.disabled,
    sessionGeneration: r.session_generation,
    createdAt: r.created_at,
    lastSignInAt: r.last_sign_in_at,
  });
}
