import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { AppError } from '../../common/errors/app-error';
import { ErrorCode } from '../../common/errors/error-codes';
import { OidcService } from '../../staff/sso/oidc.service';
import { UsersService } from '../../staff/users.service';
import { dashboardActor, staffActorName } from '../http/session.guard';
import { SignIn } from './sign-in';

/** How long the provider may take to send the visitor back. */
const SSO_ROUND_TRIP_MS = 10 * 60_000;

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
  ) {}

  get enabled(): boolean {
    return this.oidc.enabled;
  }

  /** Where to send the browser; the checks go into the session (which this creates). */
  async start(req: Request): Promise<string> {
    const { url, checks } = await this.oidc.start();
    req.session.sso = { ...checks, at: Date.now() };
    return url;
  }

  /** The page to go to after the provider's answer; throws a 401/403 AppError when it is refused. */
  async finish(req: Request): Promise<string> {
    const checks = req.session?.sso;
    if (req.session) delete req.session.sso;
    if (!checks || !(Date.now() - checks.at < SSO_ROUND_TRIP_MS)) {
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
}
