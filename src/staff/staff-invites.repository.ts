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
const RANK = `ARRAY['owner', 'admin', 'support', 'viewer']::varchar[]`;
/**
 * A link lives only while its inviter can still grant it (docs/security.md, Invitations): the inviter exists, is
 * enabled and holds at least the role the link grants (`system`: the operator's own tools).
 */
const INVITER_CAN_GRANT = `(staff_invites.invited_by = 'system' OR EXISTS (
  SELECT 1 FROM users u WHERE lower(u.username) = lower(staff_invites.invited_by) AND NOT u.disabled
    AND array_position(${RANK}, u.role) <= array_position(${RANK}, staff_invites.role)))`;
const USABLE = `accepted_at IS NULL AND expires_at > now() AND ${INVITER_CAN_GRANT}`;
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
      `SELECT ${INVITE_COLUMNS} FROM staff_invites WHERE token_hash = $1 AND ${USABLE}`,
      [tokenHash],
    );
    return rows.length ? fromRow(rows[0]) : null;
  }

  /** Uses the token once: of two concurrent accepts, one gets the invitation and the other null. */
  async consume(manager: EntityManager, tokenHash: string): Promise<PendingInvite | null> {
    const rows = await manager.query<InviteRow[]>(
      // In a WITH: TypeORM answers a bare UPDATE ... RETURNING with [rows, count], a SELECT with the rows.
      `WITH used AS (
         UPDATE staff_invites SET accepted_at = now() WHERE token_hash = $1 AND ${USABLE}
         RETURNING ${INVITE_COLUMNS}
       ) SELECT * FROM used`,
      [tokenHash],
    );
    return rows.length ? fromRow(rows[0]) : null;
  }

  /** Invitations not yet accepted and not expired, newest first. */
  async listPending(): Promise<PendingInvite[]> {
    const rows = await this.dataSource.query<InviteRow[]>(
      `SELECT ${INVITE_COLUMNS} FROM staff_invites WHERE ${USABLE} ORDER BY id DESC LIMIT 100`,
    );
    return rows.map(fromRow);
  }

  /** Deletes the pending invitations for this username or e-mail (a new one replaces them); the deleted ones. */
  async deletePendingFor(manager: EntityManager, username: string, email: string): Promise<PendingInvite[]> {
    const rows = await manager.query<InviteRow[]>(
      `WITH gone AS (
         DELETE FROM staff_invites WHERE accepted_at IS NULL AND (lower(username) = lower($1) OR lower(email) = lower($2))
         RETURNING ${INVITE_COLUMNS}
       ) SELECT * FROM gone`,
      [username, email],
    );
    return rows.map(fromRow);
  }

  /** Deletes one pending invitation (its link dies); null when there is none by this id. */
  async deletePending(manager: EntityManager, id: number): Promise<PendingInvite | null> {
    const rows = await manager.query<InviteRow[]>(
      `WITH gone AS (DELETE FROM staff_invites WHERE id = $1 AND accepted_at IS NULL RETURNING ${INVITE_COLUMNS}) SELECT * FROM gone`,
      [id],
    );
    return rows.length ? fromRow(rows[0]) : null;
  }

  /** A new token and a new expiry for a usable pending invitation (the old link dies); null when there is none. */
  async renew(manager: EntityManager, id: number, tokenHash: string, validSeconds: number): Promise<PendingInvite | null> {
    const rows = await manager.query<InviteRow[]>(
      `WITH renewed AS (
         UPDATE staff_invites SET token_hash = $2, expires_at = now() + make_interval(secs => $3) WHERE id = $1 AND ${USABLE}
         RETURNING ${INVITE_COLUMNS}
       ) SELECT * FROM renewed`,
      [id, tokenHash, validSeconds],
    );
    return rows.length ? fromRow(rows[0]) : null;
  }
}
