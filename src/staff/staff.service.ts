import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { EventRecorder } from '../events/event-recorder';
import type { Actor } from '../common/auth/actor';
import { AppError, type FieldError } from '../common/errors/app-error';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { MailService } from '../mail/mail.service';
import { ProductsService } from '../products/products.service';
import { isStaffRole, type StaffRole } from './roles';
import { StaffInvitesRepository, type PendingInvite } from './staff-invites.repository';
import type { User } from './user.entity';
import { passwordProblem, usernameProblem, UsersService } from './users.service';
import { type AccountAccess, UsersRepository } from './users.repository';
import { SecondFactorsService } from './second-factors/second-factors.service';
import { staffActor } from './staff-actor';

/** How long an invitation link works (docs/dashboard.md, Staff and roles). */
export const INVITE_VALID_HOURS = 72;
const EMAIL_PATTERN = /^[^\s@<>()",;:]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,63}$/;
export const EMAIL_MAX_LENGTH = 320;

/** A staff account as the Staff page and GET /api/v1/admin/staff show it: no secret. */
export interface StaffAccount {
  id: number;
  username: string;
  email: string | null;
  role: StaffRole;
  /** Product codes, or null for every product. */
  products: string[] | null;
  /** Kinds of second factor enrolled ("totp", "passkey"). */
  secondFactors: string[];
  lastSignInAt: Date | null;
  disabled: boolean;
  createdAt: Date;
}

export interface InviteInput {
  username: string;
  email: string;
  role: string;
  /** Product codes; empty or null: every product. */
  products: readonly string[] | null;
}

/** What the owner sees once after inviting: the link (never stored in clear) and whether it was also mailed. */
export interface SentInvite {
  invite: PendingInvite;
  url: string;
  mailed: boolean;
}

export const inviteTokenHash = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');
/** Invitation tokens are 32 random bytes, base64url: anything else is not worth a lookup. */
export const INVITE_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/**
 * Staff accounts, roles and invitations (docs/dashboard.md, Staff and roles). Every change is one transaction with its
 * `staff.*` audit entry; a change of role, products or the disabled flag ends the account's sessions. At least one
 * enabled owner always remains: the owners' rows are locked while that is checked, so two owners demoting each other
 * at once cannot both succeed.
 */
@Injectable()
export class StaffService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly users: UsersRepository,
    private readonly invites: StaffInvitesRepository,
    private readonly passwords: UsersService,
    private readonly products: ProductsService,
    private readonly mail: MailService,
    private readonly events: EventRecorder,
    private readonly secondFactors: SecondFactorsService,
  ) {}

  async listAccounts(): Promise<StaffAccount[]> {
    const users = await this.users.list();
    const codes = await this.products.codesById(users.flatMap((u) => u.productIds ?? []));
    const factors = await this.secondFactors.factorsByAccount(users.map((u) => u.id));
    return users.map((u) => this.account(u, codes, factors.get(u.id) ?? []));
  }

  /** Every account's username, for suggestions (the audit page's Staff member filter). */
  async usernames(): Promise<string[]> {
    return (await this.users.list()).map((u) => u.username);
  }

  async getAccount(id: number): Promise<StaffAccount> {
    const user = await this.users.getById(id);
    if (!user) throw AppError.notFound('Staff account');
    const factors = await this.secondFactors.factorsOf(user.id);
    return this.account(user, await this.products.codesById(user.productIds ?? []), factors);
  }

  listPendingInvites(): Promise<PendingInvite[]> {
    return this.invites.listPending();
  }

  /** Product codes of these ids (for showing an invitation's products). */
  productCodes(ids: Iterable<number>): Promise<Map<number, string>> {
    return this.products.codesById(ids);
  }

  /** Invites a new staff member: a single-use link valid 72 h, mailed as `staff_invite` and shown once to the owner. */
  async invite(input: InviteInput, actor: Actor): Promise<SentInvite> {
    const username = input.username.trim();
    const email = input.email.trim();
    // Every problem of the form at once, not one per submission (docs/dashboard.md, Staff and roles).
    const errors: FieldError[] = [];
    const problem = usernameProblem(username);
    if (problem) errors.push({ field: 'username', message: problem });
    if (email.length > EMAIL_MAX_LENGTH || !EMAIL_PATTERN.test(email))
      errors.push({ field: 'email', message: 'give a valid e-mail address' });
    const role = isStaffRole(input.role) ? input.role : null;
    if (!role) errors.push({ field: 'role', message: 'choose owner, admin, support or viewer' });
    const productIds = await this.productIds(input.products).catch((err: unknown) => {
      if (!(err instanceof AppError)) throw err;
      errors.push(...((err.details?.fields as FieldError[] | undefined) ?? [{ field: 'products', message: err.message }]));
      return null;
    });
    if (errors.length || !role) throw AppError.validation(errors);
    if (await this.users.getByUsername(username))
      throw AppError.conflict(`A staff account named ${username} already exists`, { field: 'username' });
    const token = randomBytes(32).toString('base64url');
    const url = `${this.config.publicUrl}/staff/invite/${token}`;
    const invitedBy = actor.name?.replace(/^staff:/, '') ?? 'system';
    return this.users.transaction(async (manager) => {
      // Inviting the same person again replaces the earlier link (docs/security.md, Invitations): it dies here.
      for (const replaced of await this.invites.deletePendingFor(manager, username, email))
        await this.record(manager, 'staff.invitation_revoked', actor, {
          username: replaced.username,
          email: replaced.email,
          replaced: true,
        });
      const invite = await this.invites.insert(
        manager,
        { tokenHash: inviteTokenHash(token), username, email, role, productIds, invitedBy },
        INVITE_VALID_HOURS * 3600,
      );
      const mailed = await this.mail.queueStaffInvite(email, url, { role, invitedBy }, manager);
      await this.record(manager, 'staff.invited', actor, {
        username,
        email,
        role,
        products: input.products?.length ? input.products : null,
      });
      return { invite, url, mailed };
    });
  }

  /** Revokes a pending invitation: its link dies, recorded as staff.invitation_revoked; 404 when none is pending. */
  async revokeInvite(id: number, actor: Actor): Promise<PendingInvite> {
    return this.users.transaction(async (manager) => {
      const invite = await this.invites.deletePending(manager, id);
      if (!invite) throw AppError.notFound('Invitation');
      await this.record(manager, 'staff.invitation_revoked', actor, { username: invite.username, email: invite.email });
      return invite;
    });
  }

  /** Sends a pending invitation again with a new link (the old one dies) and a new 72 h; shown once, like the first. */
  async resendInvite(id: number, actor: Actor): Promise<SentInvite> {
    const token = randomBytes(32).toString('base64url');
    const url = `${this.config.publicUrl}/staff/invite/${token}`;
    return this.users.transaction(async (manager) => {
      const invite = await this.invites.renew(manager, id, inviteTokenHash(token), INVITE_VALID_HOURS * 3600);
      if (!invite) throw AppError.notFound('Invitation');
      const mailed = await this.mail.queueStaffInvite(invite.email, url, { role: invite.role, invitedBy: invite.invitedBy }, manager);
      const products = invite.productIds === null ? null : [...(await this.products.codesById(invite.productIds)).values()];
      await this.record(manager, 'staff.invited', actor, {
        username: invite.username,
        email: invite.email,
        role: invite.role,
        products,
        resent: true,
      });
      return { invite, url, mailed };
    });
  }

  /** The invitation behind a link, or null when the link is unknown, used or expired. */
  findInvite(token: string): Promise<PendingInvite | null> {
    return INVITE_TOKEN_PATTERN.test(token) ? this.invites.findUsable(inviteTokenHash(token)) : Promise.resolve(null);
  }

  /** Uses the link once and creates the account with the chosen password; 404 for a used or expired link, 409 for a taken name. */
  async acceptInvite(token: string, password: string, ip: string | null): Promise<User> {
    const problem = passwordProblem(password);
    if (problem) throw AppError.field('password', problem);
    if (!INVITE_TOKEN_PATTERN.test(token)) throw AppError.notFound('Invitation');
    const passwordHash = await this.passwords.hashPassword(password);
    return this.users.transaction(async (manager) => {
      const invite = await this.invites.consume(manager, inviteTokenHash(token));
      if (!invite) throw AppError.notFound('Invitation');
      const user = await this.users.insertInvited(manager, { ...invite, passwordHash });
      if (!user) throw AppError.conflict(`A staff account named ${invite.username} already exists`);
      await this.record(manager, 'staff.joined', staffActor(user.username, ip), {
        username: user.username,
        role: user.role,
        invited_by: invite.invitedBy,
      });
      return user;
    });
  }

  /** Changes role and products (409 for the last enabled owner's demotion); ends the account's sessions. */
  async changeAccess(id: number, input: { role: string; products: readonly string[] | null }, actor: Actor): Promise<void> {
    const role = this.role(input.role);
    const productIds = await this.productIds(input.products);
    await this.changeAccount(id, actor, (user) => ({ role, productIds, disabled: user.disabled }), 'staff.role_changed');
  }

  /** Disables or enables the account (409 for the last enabled owner); disabling ends its sessions at once. */
  async setDisabled(id: number, disabled: boolean, actor: Actor): Promise<void> {
    await this.changeAccount(
      id,
      actor,
      (user) => ({ role: user.role, productIds: user.productIds, disabled }),
      disabled ? 'staff.disabled' : 'staff.enabled',
    );
  }

  /**
   * Removes the account's second factors (app, recovery codes, passkeys) and ends its sessions, so it enrols again at its
   * next sign-in; all with the staff.second_factor_reset entry in one transaction (docs/dashboard.md, Second factors).
   */
  async resetSecondFactors(id: number, actor: Actor): Promise<void> {
    await this.users.transaction(async (manager) => {
      const user = await this.users.lockById(manager, id);
      if (!user) throw AppError.notFound('Staff account');
      await this.secondFactors.removeAll(id, manager);
      await this.users.endSessions(manager, id);
      await this.record(manager, 'staff.second_factor_reset', actor, { username: user.username });
    });
  }

  private async changeAccount(
    id: number,
    actor: Actor,
    next: (user: User) => AccountAccess,
    type: 'staff.role_changed' | 'staff.disabled' | 'staff.enabled',
  ): Promise<void> {
    await this.users.transaction(async (manager) => {
      const owners = await this.users.lockEnabledOwners(manager);
      const user = await this.users.lockById(manager, id);
      if (!user) throw AppError.notFound('Staff account');
      const access = next(user);
      // An owner limited to some products cannot reach the Staff page: it does not count (docs/security.md, Owners).
      const staysOwner = access.role === 'owner' && !access.disabled && access.productIds === null;
      if (owners.length === 1 && owners[0] === id && !staysOwner)
        throw AppError.conflict('At least one enabled owner of every product must remain: make another account such an owner first');
      const before = { role: user.role, products: await this.codes(user.productIds), disabled: user.disabled };
      const after = { role: access.role, products: await this.codes(access.productIds), disabled: access.disabled };
      if (JSON.stringify(before) === JSON.stringify(after)) return;
      await this.users.setAccess(manager, id, access);
      const details =
        type === 'staff.role_changed'
          ? {
              username: user.username,
              from: { role: before.role, products: before.products },
              to: { role: after.role, products: after.products },
            }
          : { username: user.username };
      await this.record(manager, type, actor, details);
    });
  }

  private record(
    manager: EntityManager,
    type:
      | 'staff.invited'
      | 'staff.invitation_revoked'
      | 'staff.joined'
      | 'staff.role_changed'
      | 'staff.disabled'
      | 'staff.enabled'
      | 'staff.second_factor_reset',
    actor: Actor,
    details: Record<string, unknown>,
  ) {
    return this.events.record(manager, { type, actor, details });
  }

  private role(value: string): StaffRole {
    if (!isStaffRole(value)) throw AppError.field('role', 'choose owner, admin, support or viewer');
    return value;
  }

  /** Product codes to ids; none given: every product (null). */
  private async productIds(codes: readonly string[] | null): Promise<number[] | null> {
    if (!codes?.length) return null;
    const ids: number[] = [];
    for (const code of new Set(codes)) {
      const product = await this.products.findByCode(code);
      if (!product) throw AppError.field('products', `unknown product code: ${code}`);
      ids.push(product.id);
    }
    return ids;
  }

  private async codes(ids: number[] | null): Promise<string[] | null> {
    if (ids === null) return null;
    const codes = await this.products.codesById(ids);
    return ids.map((id) => codes.get(id) ?? String(id));
  }

  private account(user: User, codes: Map<number, string>, secondFactors: string[]): StaffAccount {
    return {
      id: user.id,
      username: user.username,
      email: user.email,
      role: user.role,
      products: user.productIds === null ? null : user.productIds.map((id) => codes.get(id) ?? String(id)),
      secondFactors,
      lastSignInAt: user.lastSignInAt,
      disabled: user.disabled,
      createdAt: user.createdAt,
    };
  }
}
