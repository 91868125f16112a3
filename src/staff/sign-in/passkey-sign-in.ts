import { Injectable } from '@nestjs/common';
import { PasskeysService } from '../second-factors/passkeys.service';
import { OidcService } from '../sso/oidc.service';
import { type AuthenticatedUser, UsersService } from '../users.service';
import { SignIn } from './sign-in';
import type { SignInNext, SignInVisit } from './sign-in-visit';

/**
 * A sign-in with a passkey (docs/dashboard.md, Passkeys): on its own, any discoverable passkey of this site; after a
 * password (`pending`), that account's passkey as its second factor.
 */
@Injectable()
export class PasskeySignIn {
  constructor(
    private readonly signIn: SignIn,
    private readonly passkeys: PasskeysService,
    private readonly oidc: OidcService,
    private readonly users: UsersService,
  ) {}

  /**
   * The browser's answer to the challenge the door kept (null: none, expired, or for another purpose): signed in, or
   * refused and recorded ('sso-account': a single sign-on account's passkey alone).
   */
  async finish(
    visit: SignInVisit,
    pending: AuthenticatedUser | null,
    answer: Record<string, unknown> | null,
    challenge: string | null,
  ): Promise<SignInNext | 'refused' | 'sso-account'> {
    const userId = challenge && answer ? await this.passkeys.authenticate(answer, challenge, pending?.id ?? null) : null;
    // The provider decides for a single sign-on account (docs/security.md, Single sign-on accounts): its passkey is
    // never a way in on its own, so a role removed at the provider cannot be bypassed.
    if (userId !== null && !pending && (await this.oidc.isSsoAccount(userId))) {
      const account = await this.users.findAccount(userId);
      await this.signIn.failed(visit, account?.username ?? '', 'sso_account');
      return 'sso-account';
    }
    const user = userId === null ? null : await this.users.findAccount(userId);
    if (!user) {
      await this.signIn.failed(visit, pending?.username ?? '', 'passkey');
      return 'refused';
    }
    return this.signIn.complete(visit, user, pending ? 'password+passkey' : 'passkey', true);
  }
}
