import { Injectable } from '@nestjs/common';
import { OidcService } from '../sso/oidc.service';
import type { AuthenticatedUser } from '../users.service';
import { SignIn } from './sign-in';
import type { SignInNext, SignInVisit } from './sign-in-visit';

/** Why a step of a password sign-in was refused; the door says each in its words, and never which names exist. */
export type PasswordRefusal =
  /** Wrong name or password. */
  | 'refused'
  /** The right password of a disabled account (told only after the right password). */
  | 'disabled'
  /** The right password of a single sign-on account: it signs in at its provider. */
  | 'sso-account';

/**
 * A sign-in with a password (docs/dashboard.md, Staff and roles; Second factors): the answer to the checked password
 * (the door checks it, the dashboard through passport), then the second factor when the account has one.
 */
@Injectable()
export class PasswordSignIn {
  constructor(
    private readonly signIn: SignIn,
    private readonly oidc: OidcService,
  ) {}

  /** Before the password is checked: past the account's limit of failures the attempt waits first, whoever sends it (docs/dashboard.md, Failed sign-ins). */
  async beforeCheck(username: string): Promise<void> {
    if (username) await this.signIn.limiter.beforeAttempt(username);
  }

  /** After the password check of `username` (as typed): refused and recorded, or on to the second factor or signed in. */
  async afterCheck(
    visit: SignInVisit,
    username: string,
    checked: AuthenticatedUser | 'disabled' | null,
  ): Promise<SignInNext | PasswordRefusal> {
    // Told only after the right password, so a guesser learns nothing (docs/dashboard.md, Staff and roles).
    if (checked === 'disabled') {
      await this.signIn.failed(visit, username, 'disabled');
      return 'disabled';
    }
    if (!checked) {
      // The actor is the name as typed: nobody was authenticated (docs/dashboard.md, Staff and roles).
      await this.signIn.failed(visit, username, 'password');
      return 'refused';
    }
    // Only after the right password (nothing leaks to a guesser): a single sign-on account signs in at its provider.
    if (await this.oidc.isSsoAccount(checked.id)) {
      await this.signIn.failed(visit, username, 'sso_account');
      return 'sso-account';
    }
    return this.signIn.afterPassword(visit, checked);
  }

  /** The second step: a TOTP code or an unused recovery code of the account whose password was right. */
  async secondFactor(visit: SignInVisit, user: AuthenticatedUser, code: string): Promise<SignInNext | 'refused'> {
    await this.signIn.limiter.beforeAttempt(user.username);
    const matched = await this.signIn.factors.verify(user.id, code);
    if (!matched) {
      await this.signIn.failed(visit, user.username, 'second_factor');
      return 'refused';
    }
    return this.signIn.complete(visit, user, `password+${matched}`, true);
  }
}
