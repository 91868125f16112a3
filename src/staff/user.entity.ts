import { Check, Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { TimestampColumn } from '../common/timestamp-column';
import type { StaffRole } from './roles';

/** A staff account (docs/dashboard.md, Staff and roles); the password is stored as an Argon2id hash only, and an SSO account has none. */
@Entity('users')
// UNIQUE (lower(username)): an expression TypeORM cannot declare, so a schema diff leaves it alone; the migration creates it.
@Index('users_username_key', { synchronize: false })
@Check('users_role_check', `role IN ('owner', 'admin', 'support', 'viewer')`)
export class User {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'users_pkey' })
  id: number;

  @Column({ type: 'varchar', length: 64 })
  username: string;

  /** Null for a single sign-on account, which has no password (docs/dashboard.md, Single sign-on). */
  @Column({ name: 'password_hash', type: 'varchar', length: 255, nullable: true })
  passwordHash: string | null;

  @Column({ type: 'varchar', length: 16 })
  role: StaffRole;

  /** Product ids, like an admin token's (ids survive a renamed code); null: every product. */
  @Column({ name: 'product_ids', type: 'int', array: true, nullable: true })
  productIds: number[] | null;

  @Column({ type: 'varchar', length: 320, nullable: true })
  email: string | null;

  @Column({ type: 'boolean', default: false })
  disabled: boolean;

  /** Grows on each change that ends the account's sessions (role, products, disabled, second factors). */
  @Column({ name: 'session_generation', type: 'integer', default: 0 })
  sessionGeneration: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @TimestampColumn('last_sign_in_at', { nullable: true })
  lastSignInAt: Date | null;
}
