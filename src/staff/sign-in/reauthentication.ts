import { Injectable } from '@nestjs/common';
import { PasskeysService } from '../second-factors/passkeys.service';
import { OidcService } from '../sso/oidc.service';
import { type SessionUser, UsersService } from '../users.service';
import { SignIn } from './sign-in';
import type { SignInVisit } from './sign-in-visit';

/**
 * A signed-in account proving itself again before a sensitive action (docs/security.md, Sudo mode): its password with
 * its second factor, or a passkey; a single sign-on account only at its provider (SsoSignIn). Success renews the
 * session's sudo time; a failure is counted and recorded like a failed sign-in.
 */
@Injectable()
export class Reauthentication {
  constructor(
    private readonly signIn: SignIn,
    private readonly users: UsersService,
    private readonly passkeys: PasskeysService,
    private readonly oidc: OidcService,
  ) {}

  /** The password, and the TOTP or recovery code of an account that has one; an account with only a passkey uses it. */
  async withPassword(visit: SignInVisit, account: SessionUser, password: string, code: string): Promise<boolean> {
    await this.signIn.limiter.beforeAttempt(account.username);
    const factors = await this.signIn.factors.factorsOf(account.id);
    const sso = await this.oidc.isSsoAccount(account.id);
    const checked = sso ? null : await this.users.verifyCredentials(account.username, password);
    // The password alone is not enough for an account with a second factor: its code too, or the passkey form.
    const secondOk =
      checked === null || checked.id !== account.id
        ? false
        : factors.includes('totp')
          ? (await this.signIn.factors.verify(account.id, code)) !== null
          : !factors.includes('passkey');
    if (!secondOk) {
      await this.signIn.failed(visit, account.username, 'sudo');
      return false;
    }
    await this.signIn.limiter.succeeded(account.username);
    this.signIn.grantSudo(visit);
    return true;
  }

  /** One of the account's own passkeys, answering the challenge the door kept (null: none, or expired). */
  async withPasskey(
    visit: SignInVisit,
    account: SessionUser,
    answer: Record<string, unknown> | null,
    challenge: string | null,
  ): Promise<boolean> {
    // A single sign-on account proves itself at its provider only (docs/security.md, Single sign-on accounts).
    const sso = await this.oidc.isSsoAccount(account.id);
    const userId = !sso && challenge && answer ? await this.passkeys.authenticate(answer, challenge, account.id) : null;
    if (userId !== account.id) {
      await this.signIn.failed(visit, account.username, 'sudo_passkey');
      return false;
    }
    this.signIn.grantSudo(visit);
    return true;
  }
}
