import { Module } from '@nestjs/common';
import { StaffSecurityModule } from '../staff-security.module';
import { StaffModule } from '../staff.module';
import { PasskeySignIn } from './passkey-sign-in';
import { PasswordSignIn } from './password-sign-in';
import { Reauthentication } from './reauthentication';
import { SignIn } from './sign-in';
import { SignedInSessions } from './signed-in-sessions';
import { SsoSignIn } from './sso-sign-in';

/**
 * How staff sign in (docs/architecture.md, Staff authentication): password, second factor, passkey and single sign-on
 * as plain services. A door (the dashboard) brings the HTTP side: forms, cookies, the session middleware, redirects.
 */
@Module({
  imports: [StaffModule, StaffSecurityModule],
  providers: [SignIn, PasswordSignIn, PasskeySignIn, SsoSignIn, Reauthentication, SignedInSessions],
  exports: [SignIn, PasswordSignIn, PasskeySignIn, SsoSignIn, Reauthentication, SignedInSessions],
})
export class StaffSignInModule {}
