import { Injectable } from '@nestjs/common';
import { Algorithm, hash, verify } from '@node-rs/argon2';
import { createHash } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { type Actor, SYSTEM_ACTOR } from '../common/auth/actor';
import { EventRecorder } from '../events/event-recorder';
import type { StaffRole } from './roles';
import type { User } from './user.entity';
import { UsersRepository } from './users.repository';

/** Who is logged in (req.user): read from the database on every request, so a change applies at once. */
export interface SessionUser {
  id: number;
  username: string;
  role: StaffRole;
  /** The products the account is limited to (ids), or null for every product. */
  productIds: number[] | null;
}

/** A user as checked at login and on every request: `credentialTag` changes whenever the password or the access does. */
export interface AuthenticatedUser extends SessionUser {
  credentialTag: string;
}

/**
 * A short digest of the stored hash and the session generation, kept in the session: resetting a password, or changing the
 * account's role, products or disabled flag (docs/dashboard.md, Staff and roles), ends that user's sessions on every instance.
 */
const credentialTag = (user: User) =>
  createHash('sha256').update(`${user.passwordHash}\n${user.sessionGeneration}`).digest('base64url').slice(0, 16);
const authenticated = (user: User): AuthenticatedUser => ({
  id: user.id,
  username: user.username,
  role: user.role,
  productIds: user.productIds,
  credentialTag: credentialTag(user),
});

export const USERNAME_PATTERN = /^[A-Za-z0-9_.@-]{1,64}$/;
export const PASSWORD_MIN_LENGTH = 8;
// Bounds the work an anonymous login form can ask of Argon2.
export const PASSWORD_MAX_LENGTH = 256;

// OWASP's Argon2id baseline (19 MiB, 2 passes, 1 lane), stated so a library default change cannot weaken it.
const ARGON2_OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export function passwordProblem(password: string): string | undefined {
  if (password.length < PASSWORD_MIN_LENGTH) return `the password must have at least ${PASSWORD_MIN_LENGTH} characters`;
  if (password.length > PASSWORD_MAX_LENGTH) return `the password must have at most ${PASSWORD_MAX_LENGTH} characters`;
  return undefined;
}

export function usernameProblem(username: string): string | undefined {
  return USERNAME_PATTERN.test(username) ? undefined : 'the username must be 1-64 letters, digits or _.@-';
}

/** Dashboard users: passwords are stored only as Argon2id hashes. */
@Injectable()
export class UsersService {
  private dummyHash?: Promise<string>;

  constructor(
    private readonly users: UsersRepository,
    private readonly events: EventRecorder,
  ) {}

  hashPassword(password: string): Promise<string> {
    return hash(password, ARGON2_OPTIONS);
  }

  /** The user when the credentials match, else null; an unknown name costs the same hash as a wrong password. */
  async verifyCredentials(username: string, password: string): Promise<AuthenticatedUser | null> {
    const checked = await this.checkCredentials(username, password);
    return checked === 'disabled' ? null : checked;
  }

  /**
   * As verifyCredentials, but a disabled account with the right password is told apart ('disabled'): only someone who
   * knows the password learns that the account is disabled (docs/dashboard.md, Staff and roles).
   */
  async checkCredentials(username: string, password: string): Promise<AuthenticatedUser | 'disabled' | null> {
    const plausible = !usernameProblem(username) && password.length > 0 && password.length <= PASSWORD_MAX_LENGTH;
    const user = plausible ? await this.users.getByUsername(username) : null;
    this.dummyHash ??= this.hashPassword('no such user: equalises login timing');
    // A single sign-on account has no password: checked against the dummy hash, and refused whatever matched.
    const stored = user?.passwordHash ?? (await this.dummyHash);
    const matches = await verify(stored, password.slice(0, PASSWORD_MAX_LENGTH)).catch(() => false);
    // A disabled account, and a single sign-on account (no password), are refused like a wrong password: the form does not
    // tell which names exist or how they sign in.
    if (!user?.passwordHash || !matches) return null;
    return user.disabled ? 'disabled' : authenticated(user);
  }

  async findSessionUser(id: number): Promise<AuthenticatedUser | null> {
    const user = await this.users.getById(id);
    return user && !user.disabled ? authenticated(user) : null;
  }

  /**
   * last_sign_in_at and the staff.signed_in entry naming how (password, password+totp, passkey, sso; docs/dashboard.md,
   * Second factors), in one transaction.
   */
  recordLogin(user: SessionUser, actor: Actor, method = 'password'): Promise<void> {
    return this.users.transaction(async (manager) => {
      await this.users.touchLastSignIn(user.id, manager);
      await this.events.record(manager, { type: 'staff.signed_in', actor, details: { username: user.username, method } });
    });
  }

  async recordLogout(actor: Actor): Promise<void> {
    await this.events.record(undefined, { type: 'auth.logout', actor });
  }

  /** The account as the session names it, with its current credential tag (null when it is gone). */
  findAccount(id: number): Promise<AuthenticatedUser | null> {
    return this.findSessionUser(id);
  }

  /** A refused sign-in (docs/dashboard.md, Second factors): the name as typed, never the password, and why. */
  async recordLoginFailed(actor: Actor, username: string, reason = 'password'): Promise<void> {
    await this.events.record(undefined, { type: 'staff.sign_in_failed', actor, details: { username, reason } });
  }

  /**
   * Creates the user with `role` (an existing name keeps its role) or resets its password (`npm run user:create`),
   * recorded as `staff.joined` or `staff.password_reset` by the system in the same transaction (docs/licences.md, Audit
   * log); true when created. Throws on an invalid name or password.
   */
  async setPassword(username: string, password: string, role: StaffRole = 'owner'): Promise<boolean> {
    const problem = usernameProblem(username) ?? passwordProblem(password);
    if (problem) throw new Error(problem);
    const passwordHash = await this.hashPassword(password);
    return this.users.transaction(async (manager) => {
      const created = await this.users.upsertPassword(username, passwordHash, role, manager);
      await this.events.record(manager, {
        type: created ? 'staff.joined' : 'staff.password_reset',
        actor: SYSTEM_ACTOR,
        details: created ? { username, role } : { username },
      });
      return created;
    });
  }

  /**
   * `licence-server user create`: a new account with a password, `role` and the products it is limited to (null: every
   * product), recorded as `staff.joined` by the system in the same transaction; false when the name is taken (any case).
   */
  async createWithPassword(
    username: string,
    password: string,
    role: StaffRole,
    products: { id: number; code: string }[] | null,
  ): Promise<boolean> {
    const problem = usernameProblem(username) ?? passwordProblem(password);
    if (problem) throw new Error(problem);
    const passwordHash = await this.hashPassword(password);
    return this.users.transaction(async (manager) => {
      const productIds = products && products.map((p) => p.id);
      if (!(await this.users.insertWithPassword(manager, { username, passwordHash, role, productIds }))) return false;
      const details = products === null ? { username, role } : { username, role, products: products.map((p) => p.code) };
      await this.events.record(manager, { type: 'staff.joined', actor: SYSTEM_ACTOR, details });
      return true;
    });
  }

  /**
   * `licence-server user reset`: a new password for an existing account (its sessions end, its role stays), recorded as
   * `staff.password_reset` by the system in the same transaction; false when there is no account of that name.
   */
  async resetPassword(username: string, password: string): Promise<boolean> {
    const problem = usernameProblem(username) ?? passwordProblem(password);
    if (problem) throw new Error(problem);
    const passwordHash = await this.hashPassword(password);
    return this.users.transaction(async (manager) => {
      if (!(await this.users.replacePassword(username, passwordHash, manager))) return false;
      await this.events.record(manager, { type: 'staff.password_reset', actor: SYSTEM_ACTOR, details: { username } });
      return true;
    });
  }

  /**
   * Creates a single sign-on account named after `wanted` (made a valid username; a taken name gets a number), and
   * runs `link` with its id in the same transaction: the account and its identity exist together or not at all.
   */
  createWithoutPassword(
    wanted: string,
    role: StaffRole,
    actorFor: (username: string) => Actor,
    link: (id: number, manager: EntityManager) => Promise<boolean>,
  ): Promise<AuthenticatedUser | null> {
    const base =
      Array.from(wanted.replace(/[^A-Za-z0-9_.@-]/g, '_'))
        .slice(0, 56)
        .join('') || 'sso-user';
    return this.users.transaction(async (manager) => {
      for (let n = 1; n <= 50; n++) {
        const username = n === 1 ? base : `${base}-${n}`;
        const id = await this.users.insertWithoutPassword(username, role, manager);
        if (id === null) continue;
        if (!(await link(id, manager))) throw new Error('this identity was linked by a concurrent sign-in');
        await this.events.record(manager, {
          type: 'staff.joined',
          actor: actorFor(username),
          details: { username, role, single_sign_on: true },
        });
        const created = await this.users.getById(id, manager);
        return created && authenticated(created);
      }
      return null;
    });
  }

  /** The provider's current role for a single sign-on account (docs/dashboard.md, Single sign-on); null when it is not one. */
  syncSsoRole(id: number, role: StaffRole, actor: Actor): Promise<{ role: StaffRole; disabled: boolean } | null> {
    return this.users.transaction(async (manager) => {
      const synced = await this.users.syncSsoRole(id, role, manager);
      if (synced && synced.previous !== synced.role) {
        await this.events.record(manager, {
          type: 'staff.role_changed',
          actor,
          details: { username: synced.username, from: { role: synced.previous }, to: { role: synced.role }, single_sign_on: true },
        });
      }
      return synced && { role: synced.role, disabled: synced.disabled };
    });
  }

  hasUsers(): Promise<boolean> {
    return this.users.exists();
  }

  /** Creates the first user unless any user exists, recorded as `staff.joined` by the system; true when this call created it. */
  async createFirstUser(username: string, password: string): Promise<boolean> {
    if (await this.users.exists()) return false;
    const passwordHash = await this.hashPassword(password);
    return this.users.transaction(async (manager) => {
      if (!(await this.users.insertFirst(username, passwordHash, manager))) return false;
      await this.events.record(manager, { type: 'staff.joined', actor: SYSTEM_ACTOR, details: { username, first_user: true } });
      return true;
    });
  }
}
