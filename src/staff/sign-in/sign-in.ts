import { Inject, Injectable, ServiceUnavailableException } from '@nestjs/common';
import { APP_CONFIG, type AppConfig, DEFAULT_STAFF_SUDO_MINUTES, type StaffConfig, staffConfig } from '../../config/app-config';
import { toError } from '../../common/errors/to-error';
import { SecondFactorsService } from '../second-factors/second-factors.service';
import { StaffSignInLimiter } from '../second-factors/sign-in-limiter';
import { staffActorName, visitorActor } from '../staff-actor';
import { type AuthenticatedUser, UsersService } from '../users.service';
import type { SignInNext, SignInVisit } from './sign-in-visit';

/** How long a checked password waits for its second factor. */
export const PENDING_SIGN_IN_MS = 5 * 60_000;

/** The audit actor of a visit: `name` is `staff:<username>`, the name as typed, or null. */
export const visitActor = (visit: SignInVisit, name: string | null) => visitorActor(name, visit.ip ?? null);

/**
 * The end of every way in (docs/dashboard.md, Second factors; Single sign-on): the session starts, the sign-in is
 * recorded, the account's failure count clears, and an account that must enrol a second factor is sent to do so.
 */
@Injectable()
export class SignIn {
  private readonly settings: StaffConfig;

  constructor(
    private readonly users: UsersService,
    readonly factors: SecondFactorsService,
    readonly limiter: StaffSignInLimiter,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.settings = staffConfig(config);
  }

  /** Starts the session; what comes next. `passwordAccount`: STAFF_REQUIRE_2FA applies (not to SSO accounts). */
  async complete(visit: SignInVisit, user: AuthenticatedUser, method: string, passwordAccount: boolean): Promise<SignInNext> {
    // Logging in is the first write to the session store (nothing is stored before): its outage is a 503, not a bug.
    await new Promise<void>((resolve, reject) => visit.logIn(user, (err) => (err ? reject(toError(err)) : resolve()))).catch(() => {
      throw new ServiceUnavailableException('Sessions cannot be stored right now; try again shortly.');
    });
    // Signing in is proving oneself: sensitive actions are open for STAFF_SUDO_MINUTES (docs/security.md, Sudo mode).
    this.grantSudo(visit);
    await this.users.recordLogin(user, visitActor(visit, staffActorName(user.username)), method);
    await this.limiter.succeeded(user.username);
    if (passwordAccount && this.settings.requireSecondFactor && (await this.factors.factorsOf(user.id)).length === 0) {
      visit.session.enrolmentRequired = true;
      return 'enrol-second-factor';
    }
    return 'signed-in';
  }

  /** The account proved itself just now (a sign-in, or a re-authentication on the confirm-access page). */
  grantSudo(visit: SignInVisit): void {
    visit.session.sudoAt = Date.now();
  }

  get sudoMinutes(): number {
    return this.settings.sudoMinutes ?? DEFAULT_STAFF_SUDO_MINUTES;
  }

  /** True while the session's last proof is younger than STAFF_SUDO_MINUTES. */
  hasSudo(visit: { session?: SignInVisit['session'] }): boolean {
    const at = visit.session?.sudoAt;
    return typeof at === 'number' && at <= Date.now() && Date.now() - at < this.sudoMinutes * 60_000;
  }

  /** After a correct password: the second factor when the account has one (it waits in the session), else signed in. */
  async afterPassword(visit: SignInVisit, user: AuthenticatedUser): Promise<SignInNext> {
    if ((await this.factors.factorsOf(user.id)).length > 0) {
      visit.session.pendingSignIn = { id: user.id, username: user.username, credentialTag: user.credentialTag, at: Date.now() };
      return 'second-factor';
    }
    return this.complete(visit, user, 'password', true);
  }

  /** The account waiting for its second factor, when the wait is recent and its password has not changed since. */
  async pending(visit: { session?: SignInVisit['session'] }): Promise<AuthenticatedUser | null> {
    const pending = visit.session?.pendingSignIn;
    if (!pending || !(Date.now() - pending.at < PENDING_SIGN_IN_MS)) return null;
    const user = await this.users.findAccount(pending.id);
    return user && user.username === pending.username && user.credentialTag === pending.credentialTag ? user : null;
  }

  /** A failed attempt: counted for the account, and staff.sign_in_failed naming why. */
  async failed(visit: Pick<SignInVisit, 'ip'>, username: string, reason: string): Promise<void> {
    if (username) await this.limiter.failed(username);
    await this.users.recordLoginFailed(visitorActor(username || null, visit.ip ?? null), username, reason);
  }
}
