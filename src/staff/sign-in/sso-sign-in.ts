import { Injectable } from '@nestjs/common';
import { AppError } from '../../common/errors/app-error';
import { ErrorCode } from '../../common/errors/error-codes';
import type { StaffRole } from '../roles';
import { OidcService, type SsoChecks } from '../sso/oidc.service';
import { staffActorName } from '../staff-actor';
import { UsersService } from '../users.service';
import { SignIn, visitActor } from './sign-in';
import type { SignInNext, SignInVisit } from './sign-in-visit';

/**
 * What the provider's answer must match, kept by the door until the callback; `sudo`: a signed-in account proving
 * itself again, and where it returns (a place of the door's, opaque here).
 */
export interface SsoCeremony extends SsoChecks {
  sudo?: { userId: number; returnTo: string };
}

/** A re-authentication at the provider succeeded: the account goes back where it came from. */
export interface SudoRenewed {
  returnTo: string;
}

/**
 * Single sign-on of staff (docs/dashboard.md, Single sign-on): the provider's address with the checks its answer must
 * pass, and the answer that matches the account by issuer and sub, creating it at its first sign-in. An identity whose
 * role claim names no role we know (and no OIDC_DEFAULT_ROLE) gets no access.
 */
@Injectable()
export class SsoSignIn {
  constructor(
    private readonly oidc: OidcService,
    private readonly users: UsersService,
    private readonly signIn: SignIn,
  ) {}

  get enabled(): boolean {
    return this.oidc.enabled;
  }

  /**
   * Where to send the browser, and the ceremony the door keeps until the callback (the dashboard seals it into a cookie).
   * `sudo`: the signed-in account re-authenticates at the provider (docs/security.md, Sudo mode).
   */
  async start(sudo?: SsoCeremony['sudo']): Promise<{ url: string; ceremony: SsoCeremony }> {
    const { url, checks } = await this.oidc.start();
    return { url, ceremony: { ...checks, ...(sudo && { sudo }) } };
  }

  /**
   * The provider's answer (`callbackQuery`, the callback's query string) to the ceremony the door kept (null: none, or
   * expired); throws a 401/403 AppError when it is refused.
   */
  async finish(visit: SignInVisit, ceremony: SsoCeremony | null, callbackQuery: string): Promise<SignInNext | SudoRenewed> {
    if (!ceremony) {
      await this.signIn.failed(visit, '', 'sso_no_request');
      throw new AppError(
        ErrorCode.UNAUTHORIZED,
        401,
        'This sign-in was not started here, or took too long. Start again from the login page.',
      );
    }
    const identity = await this.oidc.finish(callbackQuery, ceremony).catch(async (err: unknown) => {
      await this.signIn.failed(visit, '', 'sso_refused');
      throw err;
    });
    if (!identity.role) {
      await this.signIn.failed(visit, identity.name, 'sso_no_role');
      throw new AppError(ErrorCode.FORBIDDEN, 403, 'Your single sign-on account has no role in this dashboard. Ask an owner for access.');
    }
    const role = identity.role;
    if (ceremony.sudo) return this.finishSudo(visit, ceremony.sudo, await this.oidc.userIdOf(identity), role);
    const actorFor = (username: string) => visitActor(visit, staffActorName(username));
    const existing = await this.oidc.userIdOf(identity);
    // A disabled account is not found as a session user: refused, as on every other way in.
    const account = existing ? await this.users.findAccount(existing) : null;
    if (existing && !account) {
      await this.signIn.failed(visit, identity.name, 'disabled');
      throw new AppError(ErrorCode.FORBIDDEN, 403, 'This account is disabled. Ask an owner for access.');
    }
    // The provider's groups are the source of truth: a changed role applies at this sign-in.
    if (account) await this.users.syncSsoRole(account.id, role, actorFor(account.username));
    const user = account
      ? await this.users.findAccount(account.id)
      : await this.users.createWithoutPassword(identity.name, role, actorFor, (id, manager) => this.oidc.link(id, identity, manager));
    if (!user) throw new AppError(ErrorCode.CONFLICT, 409, 'No account could be created for this sign-in.');
    return this.signIn.complete(visit, user, 'sso', false);
  }

  /** Re-authentication at the provider: only the same account, still signed in here, renews its sudo time. */
  private async finishSudo(
    visit: SignInVisit,
    sudo: { userId: number; returnTo: string },
    identityUserId: number | null,
    role: StaffRole,
  ): Promise<SudoRenewed> {
    const user = visit.user;
    if (!user || user.id !== sudo.userId || identityUserId !== sudo.userId) {
      await this.signIn.failed(visit, user?.username ?? '', 'sudo_other_identity');
      throw new AppError(ErrorCode.FORBIDDEN, 403, 'The provider signed in another account than this session. Sign in again.');
    }
    // The provider's current role applies now too, as at a sign-in.
    await this.users.syncSsoRole(user.id, role, visitActor(visit, staffActorName(user.username)));
    this.signIn.grantSudo(visit);
    return { returnTo: sudo.returnTo };
  }
}
