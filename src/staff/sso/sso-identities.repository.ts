import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';

/** OpenID identities of staff accounts, matched by issuer and sub only (docs/dashboard.md, Single sign-on). */
@Injectable()
export class SsoIdentitiesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async userIdOf(issuer: string, subject: string): Promise<number | null> {
    const rows = await this.dataSource.query<{ user_id: number }[]>(
      `SELECT user_id FROM staff_sso_identities WHERE issuer = $1 AND subject = $2`,
      [issuer, subject],
    );
    return rows[0]?.user_id ?? null;
  }

  /** Links a new account to its identity; false when another sign-in linked this identity first (the caller rolls back). */
  async link(userId: number, issuer: string, subject: string, manager: EntityManager): Promise<boolean> {
    const rows: unknown[] = await manager.query(
      `INSERT INTO staff_sso_identities (user_id, issuer, subject) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING id`,
      [userId, issuer, subject],
    );
    return rows.length === 1;
  }

  async isSsoAccount(userId: number): Promise<boolean> {
    const rows = await this.dataSource.query<unknown[]>(`SELECT 1 FROM staff_sso_identities WHERE user_id = $1`, [userId]);
    return rows.length > 0;
  }
}
