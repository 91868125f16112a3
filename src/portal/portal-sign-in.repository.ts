import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { runStatement, sql } from '../database/statement';

/** What a link's GET may say about it, without using it. */
export interface SignInLinkState {
  usable: boolean;
}

/**
 * Sign-in links of the portal (docs/portal.md, Signing in), by the SHA-256 of their token. Style: named SQL with typed
 * rows; it names only the portal's table (docs/architecture.md, Database style).
 */
@Injectable()
export class PortalSignInRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** A new link valid `ttlSeconds`; links ended a day ago go in the same statement, so the table stays small. */
  async insert(tokenHash: string, email: string, ttlSeconds: number, manager: EntityManager): Promise<void> {
    await runStatement(
      manager,
      'portal-sign-in-insert',
      sql`WITH purged AS (DELETE FROM portal_sign_in_tokens WHERE expires_at < now() - interval '1 day')
       INSERT INTO portal_sign_in_tokens (token_hash, email, expires_at) VALUES (${tokenHash}, ${email}, now() + make_interval(secs => ${ttlSeconds}))`,
    );
  }

  /** Whether the link would still sign in (unused, unexpired); unknown links are simply not usable. */
  async state(tokenHash: string): Promise<SignInLinkState> {
    const rows = await runStatement<{ usable: boolean }>(
      this.dataSource.manager,
      'portal-sign-in-state',
      sql`SELECT used_at IS NULL AND expires_at > now() AS usable FROM portal_sign_in_tokens WHERE token_hash = ${tokenHash}`,
    );
    return { usable: rows[0]?.usable === true };
  }

  /** Uses the link once: its address, or null when it is unknown, used or expired (one statement, so two tabs cannot both win). */
  async consume(tokenHash: string, manager: EntityManager): Promise<string | null> {
    const rows = await runStatement<{ email: string }>(
      manager,
      'portal-sign-in-consume',
      sql`UPDATE portal_sign_in_tokens SET used_at = now() WHERE token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > now() RETURNING email`,
    );
    return rows[0]?.email ?? null;
  }
}
