import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppError } from '../../common/errors/app-error';
import { ErrorCode } from '../../common/errors/error-codes';
import { OidcService } from '../../staff/sso/oidc.service';
import type { StaffRole } from '../../staff/roles';
import { UsersService } from '../../staff/users.service';
import { dashboardActor, staffActorName } from '../http/session.guard';
import { CeremonyCookies, SSO_CEREMONY } from './ceremony-cookie';
import { SignIn } from './sign-in';

/** What the callback must match, carried in a sealed cookie; `sudo`: a signed-in account proving itself again. */
interface SsoCeremony {
  codeVerifier: string;
  state: string;
  nonce: string;
  sudo?: { userId: number; returnTo: string };
}

/**
 * Single sign-on as the dashboard uses it (docs/dashboard.md, Single sign-on): the redirect to the provider with its
 * checks kept in the session, and the callback that matches the account by issuer and sub, creating it at its first
 * sign-in. An identity whose role claim names no role we know (and no OIDC_DEFAULT_ROLE) gets no access.
 */
@Injectable()
export class SsoSignIn {
  constructor(
    private readonly oidc: OidcService,
    private readonly users: UsersService,
    private readonly signIn: SignIn,
    private readonly ceremonies: CeremonyCookies,
  ) {}

  get enabled(): boolean {
    return this.oidc.enabled;
  }

  /**
   * Where to send the browser; the checks travel in a sealed cookie, so an anonymous visitor costs no session row
   * (docs/security.md, Sessions). `sudo`: the signed-in account re-authenticates at the provider (docs/security.md, Sudo mode).
   */
  async start(req: Request, res: Response, sudo?: { userId: number; returnTo: string }): Promise<string> {
    const { url, checks } = await this.oidc.start();
    this.ceremonies.seal(req, res, SSO_CEREMONY, { ...checks, ...(sudo && { sudo }) } satisfies SsoCeremony);
    return url;
  }

  /** The page to go to after the provider's answer; throws a 401/403 AppError when it is refused. */
  async finish(req: Request, res: Response): Promise<string> {
    const checks = this.ceremonies.open<SsoCeremony>(req, res, SSO_CEREMONY);
    if (!checks) {
      await this.signIn.failed(req, '', 'sso_no_request');
      throw new AppError(
        ErrorCode.UNAUTHORIZED,
        401,
        'This sign-in was not started here, or took too long. Start again from the login page.',
      );
    }
    const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?') + 1) : '';
    const identity = await this.oidc.finish(query, checks).catch(async (err: unknown) => {
      await this.signIn.failed(req, '', 'sso_refused');
      throw err;
    });
    if (!identity.role) {
      await this.signIn.failed(req, identity.name, 'sso_no_role');
      throw new AppError(ErrorCode.FORBIDDEN, 403, 'Your single sign-on account has no role in this dashboard. Ask an owner for access.');
    }
    const role = identity.role;
    if (checks.sudo) return this.finishSudo(req, checks.sudo, await this.oidc.userIdOf(identity), role);
    const actorFor = (username: string) => dashboardActor(req, staffActorName(username));
    const existing = await this.oidc.userIdOf(identity);
    // A disabled account is not found as a session user: refused, as on every other way in.
    const account = existing ? await this.users.findAccount(existing) : null;
    if (existing && !account) {
      await this.signIn.failed(req, identity.name, 'disabled');
      throw new AppError(ErrorCode.FORBIDDEN, 403, 'This account is disabled. Ask an owner for access.');
    }
    // The provider's groups are the source of truth: a changed role applies at this sign-in.
    if (account) await this.users.syncSsoRole(account.id, role, actorFor(account.username));
    const user = account
      ? await this.users.findAccount(account.id)
      : await this.users.createWithoutPassword(identity.name, role, actorFor, (id, manager) => this.oidc.link(id, identity, manager));
    if (!user) throw new AppError(ErrorCode.CONFLICT, 409, 'No account could be created for this sign-in.');
    return this.signIn.complete(req, user, 'sso', false);
  }

  /** Re-authentication at the provider: only the same account, still signed in here, renews its sudo time. */
  private async finishSudo(
    req: Request,
    sudo: { userId: number; returnTo: string },
    identityUserId: number | null,
    role: StaffRole,
  ): Promise<string> {
    if (!req.user || req.user.id !== sudo.userId || identityUserId !== sudo.userId) {
      await this.signIn.failed(req, req.user?.username ?? '', 'sudo_other_identity');
      throw new AppError(ErrorCode.FORBIDDEN, 403, 'The provider signed in another account than this session. Sign in again.');
    }
    // The provider's current role applies now too, as at a sign-in.
    await this.users.syncSsoRole(req.user.id, role, dashboardActor(req, staffActorName(req.user.username)));
    this.signIn.grantSudo(req);
    return sudo.returnTo;
  }
}
