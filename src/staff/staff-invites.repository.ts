import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { plain, rowShape, type RowOf } from '../database/row-shape';
import { raw, runStatement, sql } from '../database/statement';
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

/** A staff_invites row read into a PendingInvite. */
const INVITE_ROWS = rowShape(plain<PendingInvite>(), 'id, username, email, role, product_ids, invited_by, created_at, expires_at');

const INVITE_COLUMNS = INVITE_ROWS.columns;

type InviteRow = RowOf<typeof INVITE_ROWS>;
const RANK = `ARRAY['owner', 'admin', 'support', 'viewer']::varchar[]`;
/**
 * A link lives only while its inviter can still grant it (docs/security.md, Invitations): the inviter exists, is
 * enabled and holds at least the role the link grants (`system`: the operator's own tools).
 */
const INVITER_CAN_GRANT = `(staff_invites.invited_by = 'system' OR EXISTS (
  SELECT 1 FROM users u WHERE lower(u.username) = lower(staff_invites.invited_by) AND NOT u.disabled
    AND array_position(${RANK}, u.role) <= array_position(${RANK}, staff_invites.role)))`;
const USABLE = `accepted_at IS NULL AND expires_at > now() AND ${INVITER_CAN_GRANT}`;
const fromRow = INVITE_ROWS.fromRow;

/** Staff invitations (docs/dashboard.md, Staff and roles): only the SHA-256 of each token is stored. Named SQL, typed rows. */
@Injectable()
export class StaffInvitesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(
    manager: EntityManager,
    invite: { tokenHash: string; username: string; email: string; role: StaffRole; productIds: number[] | null; invitedBy: string },
    validSeconds: number,
  ): Promise<PendingInvite> {
    const [row] = await runStatement<InviteRow>(
      manager,
      'staff-invites-insert',
      sql`INSERT INTO staff_invites (token_hash, username, email, role, product_ids, invited_by, expires_at)
       VALUES (${invite.tokenHash}, ${invite.username}, ${invite.email}, ${invite.role}, ${invite.productIds}, ${invite.invitedBy}, now() + make_interval(secs => ${validSeconds})) RETURNING ${raw(INVITE_COLUMNS)}`,
    );
    return fromRow(row);
  }

  /** The invitation when its token is unused and unexpired, else null. Reads only. */
  async findUsable(tokenHash: string): Promise<PendingInvite | null> {
    const rows = await runStatement<InviteRow>(
      this.dataSource.manager,
      'staff-invites-find-usable',
      sql`SELECT ${raw(INVITE_COLUMNS)} FROM staff_invites WHERE token_hash = ${tokenHash} AND ${raw(USABLE)}`,
    );
    return rows.length ? fromRow(rows[0]) : null;
  }

  /** Uses the token once: of two concurrent accepts, one gets the invitation and the other null. */
  async consume(manager: EntityManager, tokenHash: string): Promise<PendingInvite | null> {
    const rows = await runStatement<InviteRow>(
      manager,
      'staff-invites-consume',
      sql`WITH used AS (
         UPDATE staff_invites SET accepted_at = now() WHERE token_hash = ${tokenHash} AND ${raw(USABLE)}
         RETURNING ${raw(INVITE_COLUMNS)}
       ) SELECT * FROM used`,
    );
    return rows.length ? fromRow(rows[0]) : null;
  }

  /** Invitations not yet accepted and not expired, newest first. */
  async listPending(): Promise<PendingInvite[]> {
    const rows = await runStatement<InviteRow>(
      this.dataSource.manager,
      'staff-invites-list-pending',
      sql`SELECT ${raw(INVITE_COLUMNS)} FROM staff_invites WHERE ${raw(USABLE)} ORDER BY id DESC LIMIT 100`,
    );
    return rows.map(fromRow);
  }

  /** Deletes the pending invitations for this username or e-mail (a new one replaces them); the deleted ones. */
  async deletePendingFor(manager: EntityManager, username: string, email: string): Promise<PendingInvite[]> {
    const rows = await runStatement<InviteRow>(
      manager,
      'staff-invites-delete-pending-for',
      sql`WITH gone AS (
         DELETE FROM staff_invites WHERE accepted_at IS NULL AND (lower(username) = lower(${username}) OR lower(email) = lower(${email}))
         RETURNING ${raw(INVITE_COLUMNS)}
       ) SELECT * FROM gone`,
    );
    return rows.map(fromRow);
  }

  /** Deletes one pending invitation (its link dies); null when there is none by this id. */
  async deletePending(manager: EntityManager, id: number): Promise<PendingInvite | null> {
    const rows = await runStatement<InviteRow>(
      manager,
      'staff-invites-delete-pending',
      sql`WITH gone AS (DELETE FROM staff_invites WHERE id = ${id} AND accepted_at IS NULL RETURNING ${raw(INVITE_COLUMNS)}) SELECT * FROM gone`,
    );
    return rows.length ? fromRow(rows[0]) : null;
  }

  /** A new token and a new expiry for a usable pending invitation (the old link dies); null when there is none. */
  async renew(manager: EntityManager, id: number, tokenHash: string, validSeconds: number): Promise<PendingInvite | null> {
    const rows = await runStatement<InviteRow>(
      manager,
      'staff-invites-renew',
      sql`WITH renewed AS (
         UPDATE staff_invites SET token_hash = ${tokenHash}, expires_at = now() + make_interval(secs => ${validSeconds}) WHERE id = ${id} AND ${raw(USABLE)}
         RETURNING ${raw(INVITE_COLUMNS)}
       ) SELECT * FROM renewed`,
    );
    return rows.length ? fromRow(rows[0]) : null;
  }
}
