import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { runStatement, sql } from '../../database/statement';

/** OpenID identities of staff accounts, matched by issuer and sub only (docs/dashboard.md, Single sign-on). */
@Injectable()
export class SsoIdentitiesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async userIdOf(issuer: string, subject: string): Promise<number | null> {
    const rows = await runStatement<{ user_id: number }>(
      this.dataSource.manager,
      'sso-identities-user-id-of',
      sql`SELECT user_id FROM staff_sso_identities WHERE issuer = ${issuer} AND subject = ${subject}`,
    );
    return rows[0]?.user_id ?? null;
  }

  /** Links a new account to its identity; false when another sign-in linked this identity first (the caller rolls back). */
  async link(userId: number, issuer: string, subject: string, manager: EntityManager): Promise<boolean> {
    const rows = await runStatement<{ id: number }>(
      manager,
      'sso-identities-link',
      sql`INSERT INTO staff_sso_identities (user_id, issuer, subject) VALUES (${userId}, ${issuer}, ${subject}) ON CONFLICT DO NOTHING RETURNING id`,
    );
    return rows.length === 1;
  }

  async isSsoAccount(userId: number): Promise<boolean> {
    const rows = await runStatement<{ sso: number }>(
      this.dataSource.manager,
      'sso-identities-is-sso-account',
      sql`SELECT 1 AS sso FROM staff_sso_identities WHERE user_id = ${userId}`,
    );
    return rows.length > 0;
  }
}
