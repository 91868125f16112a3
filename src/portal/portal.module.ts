import { ReleasesModule } from '../releases/releases.module';
import { Module } from '@nestjs/common';
import { ActivationModule } from '../activation/activation.module';
import { EventsModule } from '../events/events.module';
import { LicensesModule } from '../licenses/licenses.module';
import { MailModule } from '../mail/mail.module';
import { PortalLoginLimiter } from './portal-login-limiter';
import { portalFormTokensProvider } from './portal-http';
import { PortalLicensesController, PortalNotFoundController } from './portal-licenses.controller';
import { PortalSignInController } from './portal-sign-in.controller';
import { PortalSignInRepository } from './portal-sign-in.repository';
import { PortalSignInService } from './portal-sign-in.service';
import { PortalSessionStore } from './portal.setup';

/** The customer portal (docs/portal.md): its own pages, layout, session and guard, on the licence and client use cases. */
@Module({
  imports: [ActivationModule, EventsModule, LicensesModule, MailModule, ReleasesModule],
  // PortalNotFoundController last: it catches only what no page matched.
  controllers: [PortalSignInController, PortalLicensesController, PortalNotFoundController],
  providers: [PortalSignInRepository, PortalSignInService, PortalLoginLimiter, PortalSessionStore, portalFormTokensProvider],
})
export class PortalModule {}
