import { Inject, Injectable, ServiceUnavailableException } from '@nestjs/common';
import type { Request } from 'express';
import { APP_CONFIG, type AppConfig, DEFAULT_STAFF_SUDO_MINUTES, type StaffConfig, staffConfig } from '../../config/app-config';
import { SecondFactorsService } from '../../staff/second-factors/second-factors.service';
import { StaffSignInLimiter } from '../../staff/second-factors/sign-in-limiter';
import { dashboardActor, ENROLMENT_PAGE, staffActorName } from '../http/session.guard';
import { type AuthenticatedUser, UsersService } from '../../staff/users.service';
import { DashboardPassport } from './dashboard-passport';

/** How long a checked password waits for its second factor. */
export const PENDING_SIGN_IN_MS = 5 * 60_000;

/**
 * The end of every way in (docs/dashboard.md, Second factors; Single sign-on): the session starts, the sign-in is
 * recorded, the account's failure count clears, and an account that must enrol a second factor is sent to do so.
 */
@Injectable()
export class SignIn {
  private readonly settings: StaffConfig;

  constructor(
    private readonly passport: DashboardPassport,
    private readonly users: UsersService,
    readonly factors: SecondFactorsService,
    readonly limiter: StaffSignInLimiter,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.settings = staffConfig(config);
  }

  /** Starts the session; the page to go to next. `passwordAccount`: STAFF_REQUIRE_2FA applies (not to SSO accounts). */
  async complete(req: Request, user: AuthenticatedUser, method: string, passwordAccount: boolean): Promise<string> {
    // Logging in is the first write to the session store (nothing is stored before): its outage is a 503, not a bug.
    await this.passport.logIn(req, user).catch(() => {
      throw new ServiceUnavailableException('Sessions cannot be stored right now; try again shortly.');
    });
    // Signing in is proving oneself: sensitive actions are open for STAFF_SUDO_MINUTES (docs/security.md, Sudo mode).
    this.grantSudo(req);
    await this.users.recordLogin(user, dashboardActor(req, staffActorName(user.username)), method);
    await this.limiter.succeeded(user.username);
    if (passwordAccount && this.settings.requireSecondFactor && (await this.factors.factorsOf(user.id)).length === 0) {
      req.session.enrolmentRequired = true;
      return ENROLMENT_PAGE;
    }
    return '/dashboard';
  }

  /** The account proved itself just now (a sign-in, or a re-authentication on the confirm-access page). */
  grantSudo(req: Request): void {
    req.session.sudoAt = Date.now();
  }

  get sudoMinutes(): number {
    return this.settings.sudoMinutes ?? DEFAULT_STAFF_SUDO_MINUTES;
  }

  /** True while the session's last proof is younger than STAFF_SUDO_MINUTES. */
  hasSudo(req: Request): boolean {
    const at = req.session?.sudoAt;
    return typeof at === 'number' && at <= Date.now() && Date.now() - at < this.sudoMinutes * 60_000;
  }

  /** After a correct password: the second-factor page when the account has one, else signed in. */
  async afterPassword(req: Request, user: AuthenticatedUser): Promise<string> {
    if ((await this.factors.factorsOf(user.id)).length > 0) {
      req.session.pendingSignIn = { id: user.id, username: user.username, credentialTag: user.credentialTag, at: Date.now() };
      return '/login/verify';
    }
    return this.complete(req, user, 'password', true);
  }

  /** The account waiting for its second factor, when the wait is recent and its password has not changed since. */
  async pending(req: Request): Promise<AuthenticatedUser | null> {
    const pending = req.session?.pendingSignIn;
    if (!pending || !(Date.now() - pending.at < PENDING_SIGN_IN_MS)) return null;
    const user = await this.users.findAccount(pending.id);
    return user && user.username === pending.username && user.credentialTag === pending.credentialTag ? user : null;
  }

  /** A failed attempt: counted for the account, and staff.sign_in_failed naming why. */
  async failed(req: Request, username: string, reason: string): Promise<void> {
    if (username) await this.limiter.failed(username);
    await this.users.recordLoginFailed(dashboardActor(req, username || null), username, reason);
  }
}
