import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { StaffRole } from './roles';

/** An invitation as the accept page and the Staff page read it (never its token). */
export interface PendingInvite {
  id: number;
  username: string;
  email: string;
  role: StaffRole;
  productIds: number[] | null;
  invitedBy: string;
  createdAt: Date;
  expiresAt: Date;
}

interface InviteRow {
  id: number;
  username: string;
  email: string;
  role: StaffRole;
  product_ids: number[] | null;
  invited_by: string;
  created_at: Date;
  expires_at: Date;
}

const INVITE_COLUMNS = 'id, username, email, role, product_ids, invited_by, created_at, expires_at';
const fromRow = (r: InviteRow): PendingInvite => ({
  id: r.id,
  username: r.username,
  email: r.email,
  role: r.role,
  productIds: r.product_ids,
  invitedBy: r.invited_by,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
});

/** Staff invitations (docs/dashboard.md, Staff and roles): only the SHA-256 of each token is stored. Named SQL, typed rows. */
@Injectable()
export class StaffInvitesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(
    manager: EntityManager,
    invite: { tokenHash: string; username: string; email: string; role: StaffRole; productIds: number[] | null; invitedBy: string },
    validSeconds: number,
  ): Promise<PendingInvite> {
    const [row] = await manager.query<InviteRow[]>(
      `INSERT INTO staff_invites (token_hash, username, email, role, product_ids, invited_by, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7)) RETURNING ${INVITE_COLUMNS}`,
      [invite.tokenHash, invite.username, invite.email, invite.role, invite.productIds, invite.invitedBy, validSeconds],
    );
    return fromRow(row);
  }

  /** The invitation when its token is unused and unexpired, else null. Reads only. */
  async findUsable(tokenHash: string): Promise<PendingInvite | null> {
    const rows = await this.dataSource.query<InviteRow[]>(
      `SELECT ${INVITE_COLUMNS} FROM staff_invites WHERE token_hash = $1 AND accepted_at IS NULL AND expires_at > now()`,
      [tokenHash],
    );
    return rows.length ? fromRow(rows[0]) : null;
  }

  /** Uses the token once: of two concurrent accepts, one gets the invitation and the other null. */
  async consume(manager: EntityManager, tokenHash: string): Promise<PendingInvite | null> {
    const rows = await manager.query<InviteRow[]>(
      // In a WITH: TypeORM answers a bare UPDATE ... RETURNING with [rows, count], a SELECT with the rows.
      `WITH used AS (
         UPDATE staff_invites SET accepted_at = now() WHERE token_hash = $1 AND accepted_at IS NULL AND expires_at > now()
         RETURNING ${INVITE_COLUMNS}
       ) SELECT * FROM used`,
      [tokenHash],
    );
    return rows.length ? fromRow(rows[0]) : null;
  }

  /** Invitations not yet accepted and not expired, newest first. */
  async listPending(): Promise<PendingInvite[]> {
    const rows = await this.dataSource.query<InviteRow[]>(
      `SELECT ${INVITE_COLUMNS} FROM staff_invites WHERE accepted_at IS NULL AND expires_at > now() ORDER BY id DESC LIMIT 100`,
    );
    return rows.map(fromRow);
  }
}
