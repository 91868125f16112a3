import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { SecondFactorsRepository } from './second-factors/second-factors.repository';
import { PasskeysService } from './second-factors/passkeys.service';
import { SecondFactorsService } from './second-factors/second-factors.service';
import { StaffSignInLimiter } from './second-factors/sign-in-limiter';
import { OidcService } from './sso/oidc.service';
import { SsoIdentitiesRepository } from './sso/sso-identities.repository';

/** How staff prove who they are beyond a password (docs/dashboard.md, Second factors; Single sign-on). */
@Module({
  imports: [EventsModule],
  providers: [SecondFactorsRepository, SecondFactorsService, PasskeysService, StaffSignInLimiter, SsoIdentitiesRepository, OidcService],
  exports: [SecondFactorsService, PasskeysService, StaffSignInLimiter, OidcService],
})
export class StaffSecurityModule {}
