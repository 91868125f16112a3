import { Injectable } from '@nestjs/common';
import type { Handler, NextFunction, Request, Response } from 'express';
import { Authenticator } from 'passport';
import { Strategy as LocalStrategy } from 'passport-local';
import { toError } from '../../common/errors/to-error';
import { AuthenticatedUser, UsersService } from '../../staff/users.service';

export const SESSION_MAX_AGE_MS = 8 * 60 * 60 * 1000;

/** What passport keeps in the session: the user, its credential tag, and the login time for an absolute 8 h lifetime. */
interface SerializedUser extends AuthenticatedUser {
  loggedInAt: number;
}

/**
 * A passport instance owned by this app (not the global singleton), so several apps in one
 * process (tests) never share strategies or serializers.
 */
@Injectable()
export class DashboardPassport {
  // Typed with Express's handler: @types/passport leaves its middleware `any` by default.
  readonly passport = new Authenticator() as Authenticator<Handler, Handler>;

  constructor(private readonly users: UsersService) {
    this.passport.use(
      'local',
      new LocalStrategy((username, password, done) => {
        this.users
          .checkCredentials(username, password)
          .then((user) => (user === 'disabled' ? done(null, false, { message: 'disabled' }) : done(null, user ?? false)), done);
      }),
    );
    this.passport.serializeUser((user, done) => {
      const { id, username, role, productIds, credentialTag } = user as AuthenticatedUser;
      done(null, { id, username, role, productIds, credentialTag, loggedInAt: Date.now() } satisfies SerializedUser);
    });
    this.passport.deserializeUser((stored: SerializedUser, done) => {
      if (typeof stored?.id !== 'number' || !(Date.now() - stored.loggedInAt < SESSION_MAX_AGE_MS)) return done(null, false);
      // A user deleted, renamed, disabled, given a new password, role or products since login loses the session
      // (docs/dashboard.md, Staff and roles): the stored tag no longer matches the database's, on every instance.
      this.users.findSessionUser(stored.id).then((user) => {
        const same = user && user.username === stored.username && user.credentialTag === stored.credentialTag;
        done(null, same ? { id: user.id, username: user.username, role: user.role, productIds: user.productIds } : false);
      }, done);
    });
  }

  /**
   * Checks the form's username/password; the user, 'disabled' (the right password of a disabled account), or null.
   * Never throws for bad credentials.
   */
  authenticate(req: Request, res: Response): Promise<AuthenticatedUser | 'disabled' | null> {
    return new Promise((resolve, reject) => {
      const next: NextFunction = (err?: unknown) => (err ? reject(toError(err)) : resolve(null));
      this.passport.authenticate(
        'local',
        { session: false },
        (err: unknown, user: AuthenticatedUser | false, info?: { message?: string }) =>
          err ? reject(toError(err)) : resolve(user || (info?.message === 'disabled' ? 'disabled' : null)),
      )(req, res, next);
    });
  }

  /** Starts the logged-in session; passport 0.7 regenerates the session id first (no fixation). */
  logIn(req: Request, user: AuthenticatedUser): Promise<void> {
    return new Promise((resolve, reject) => req.logIn(user, (err) => (err ? reject(toError(err)) : resolve())));
  }

  /**
   * Ends it: passport clears the user and regenerates (destroying the old session in the store); the
   * fresh empty session is destroyed too, so nothing of this visitor stays in the store.
   */
  async logOut(req: Request): Promise<void> {
    await new Promise<void>((resolve, reject) => req.logOut((err) => (err ? reject(toError(err)) : resolve())));
    await new Promise<void>((resolve, reject) => req.session.destroy((err) => (err ? reject(toError(err)) : resolve())));
  }
}
