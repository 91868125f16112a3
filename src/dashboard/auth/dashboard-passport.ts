import { Injectable } from '@nestjs/common';
import type { Handler, NextFunction, Request, Response } from 'express';
import { Authenticator } from 'passport';
import { Strategy as LocalStrategy } from 'passport-local';
import { toError } from '../../common/errors/to-error';
import { SignedInSessions, type StoredSignIn } from '../../staff/sign-in/signed-in-sessions';
import type { AuthenticatedUser } from '../../staff/users.service';

/**
 * A passport instance owned by this app (not the global singleton), so several apps in one process (tests) never share
 * strategies or serializers. The rules are the staff room's (SignedInSessions); this is their HTTP wiring.
 */
@Injectable()
export class DashboardPassport {
  // Typed with Express's handler: @types/passport leaves its middleware `any` by default.
  readonly passport = new Authenticator() as Authenticator<Handler, Handler>;

  constructor(sessions: SignedInSessions) {
    this.passport.use(
      'local',
      new LocalStrategy((username, password, done) => {
        sessions
          .checkPassword(username, password)
          .then((user) => (user === 'disabled' ? done(null, false, { message: 'disabled' }) : done(null, user ?? false)), done);
      }),
    );
    this.passport.serializeUser((user, done) => done(null, sessions.store(user as AuthenticatedUser)));
    this.passport.deserializeUser((stored: StoredSignIn | undefined, done) => {
      sessions.restore(stored).then((user) => done(null, user ?? false), done);
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

  /**
   * Ends the session: passport clears the user and regenerates (destroying the old session in the store); the
   * fresh empty session is destroyed too, so nothing of this visitor stays in the store.
   */
  async logOut(req: Request): Promise<void> {
    await new Promise<void>((resolve, reject) => req.logOut((err) => (err ? reject(toError(err)) : resolve())));
    await new Promise<void>((resolve, reject) => req.session.destroy((err) => (err ? reject(toError(err)) : resolve())));
  }
}
