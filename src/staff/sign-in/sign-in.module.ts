import { Module } from '@nestjs/common';
import { StaffSecurityModule } from '../staff-security.module';
import { StaffModule } from '../staff.module';
import { SignIn } from './sign-in';
import { SignedInSessions } from './signed-in-sessions';
import { SsoSignIn } from './sso-sign-in';

/**
 * How staff sign in (docs/architecture.md, Staff authentication): password, second factor, passkey and single sign-on
 * as plain services. A door (the dashboard) brings the HTTP side: forms, cookies, the session middleware, redirects.
 */
@Module({
  imports: [StaffModule, StaffSecurityModule],
  providers: [SignIn, SsoSignIn, SignedInSessions],
  exports: [SignIn, SsoSignIn, SignedInSessions],
})
export class StaffSignInModule {}
