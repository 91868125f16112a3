import { Injectable } from '@nestjs/common';
import { type AuthenticatedUser, type SessionUser, UsersService } from '../users.service';

/** A signed-in session lasts at most 8 hours from the sign-in, however active (docs/security.md, Threat model). */
export const SESSION_MAX_AGE_MS = 8 * 60 * 60 * 1000;

/** What a signed-in session keeps: the account, its credential tag, and the sign-in time for the absolute lifetime. */
export interface StoredSignIn extends AuthenticatedUser {
  loggedInAt: number;
}

/**
 * The rules of a signed-in staff session, whatever stores it (the dashboard's passport strategy and serializer call
 * them): the password check of a sign-in form, what the session keeps, and who it still belongs to on each request.
 */
@Injectable()
export class SignedInSessions {
  constructor(private readonly users: UsersService) {}

  /** The account of a right password; 'disabled' for the right password of a disabled account; null otherwise. */
  checkPassword(username: string, password: string): Promise<AuthenticatedUser | 'disabled' | null> {
    return this.users.checkCredentials(username, password);
  }

  store(user: AuthenticatedUser): StoredSignIn {
    const { id, username, role, productIds, credentialTag } = user;
    return { id, username, role, productIds, credentialTag, loggedInAt: Date.now() };
  }

  /**
   * The signed-in account of a stored session, or null once it is older than SESSION_MAX_AGE_MS or its account was
   * deleted, renamed, disabled, given a new password, role or products since (docs/dashboard.md, Staff and roles): the
   * stored tag no longer matches the database's, on every instance.
   */
  async restore(stored: StoredSignIn | undefined): Promise<SessionUser | null> {
    if (typeof stored?.id !== 'number' || !(Date.now() - stored.loggedInAt < SESSION_MAX_AGE_MS)) return null;
    const user = await this.users.findSessionUser(stored.id);
    const same = user && user.username === stored.username && user.credentialTag === stored.credentialTag;
    return same ? { id: user.id, username: user.username, role: user.role, productIds: user.productIds } : null;
  }
}
