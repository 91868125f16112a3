import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** A dashboard user; the password is stored as an Argon2id hash only, and an SSO account has none. */
@Entity('users')
// UNIQUE (lower(username)): an expression TypeORM cannot declare, so a schema diff leaves it alone; the migration creates it.
@Index('users_username_key', { synchronize: false })
export class User {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'users_pkey' })
  id: number;

  @Column({ type: 'varchar', length: 64 })
  username: string;

  /** Null for a single sign-on account, which has no password (docs/dashboard.md, Single sign-on). */
  @Column({ name: 'password_hash', type: 'varchar', length: 255, nullable: true })
  passwordHash: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'last_login_at', type: 'timestamptz', nullable: true })
  lastLoginAt: Date | null;
}
