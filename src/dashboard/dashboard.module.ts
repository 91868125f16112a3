import { Module } from '@nestjs/common';
import { ActivationModule } from '../activation/activation.module';
import { AuditModule } from '../audit/audit.module';
import { EventsModule } from '../events/events.module';
import { LicensesModule } from '../licenses/licenses.module';
import { MailModule } from '../mail/mail.module';
import { ProductsModule } from '../products/products.module';
import { KeyringModule } from '../keyring/keyring.module';
import { StatsModule } from '../stats/stats.module';
import { StoresModule } from '../stores/stores.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { AuthController } from './auth/auth.controller';
import { SsoController } from './auth/sso.controller';
import { CeremonyCookies } from './auth/ceremony-cookie';
import { SudoController } from './auth/sudo.controller';
import { SecurityPageController } from './pages/security.controller';
import { StaffSecurityModule } from '../staff/staff-security.module';
import { StaffSignInModule } from '../staff/sign-in/sign-in.module';
import { DashboardPassport } from './auth/dashboard-passport';
import { inviteFormTokensProvider, loginFormTokensProvider } from './auth/staff-login-form';
import { AuditPageController } from './pages/audit.controller';
import { BulkPagesController } from './pages/bulk.controller';
import { LicenseFilesPagesController } from './pages/license-files.controller';
import { RelayPoolsPagesController } from './pages/relay-pools.controller';
import { LicensesPagesController } from './pages/licenses.controller';
import { CustomerPagesController } from './pages/customer.controller';
import { LicensePagesController } from './pages/license.controller';
import { MailPagesController } from './pages/mail.controller';
import { DashboardNotFoundController } from './pages/not-found.controller';
import { OverviewController } from './pages/overview.controller';
import { ProductsPageController } from './pages/products.controller';
import { ReleasesPageController } from './pages/releases.controller';
import { ReleasesModule } from '../releases/releases.module';
import { SigningKeysPageController } from './pages/signing-keys.controller';
import { StaffPagesController } from './pages/staff.controller';
import { StoresPageController } from './pages/stores.controller';
import { SavedViewsController } from './pages/saved-views.controller';
import { SavedViewsRepository } from './saved-views.repository';
import { SavedViewsService } from './saved-views.service';
import { TokensPageController } from './pages/tokens.controller';
import { WebhooksPagesController } from './pages/webhooks.controller';
import { DashboardSessionStore } from './session-store';
import { StaffModule } from '../staff/staff.module';

/** The staff dashboard: server-rendered pages on top of the same services as the admin API (never its own SQL for licences). */
@Module({
  imports: [
    ActivationModule,
    AuditModule,
    EventsModule,
    KeyringModule,
    LicensesModule,
    MailModule,
    ProductsModule,
    ReleasesModule,
    StatsModule,
    StaffModule,
    StaffSecurityModule,
    StaffSignInModule,
    StoresModule,
    WebhooksModule,
  ],
  // DashboardNotFoundController last: it catches only what no page matched.
  controllers: [
    AuthController,
    SsoController,
    SecurityPageController,
    SudoController,
    OverviewController,
    // Before the licence pages: /licenses/bulk and /licenses/views are not licence ids.
    BulkPagesController,
    SavedViewsController,
    RelayPoolsPagesController,
    CustomerPagesController,
    LicensesPagesController,
    // After every fixed path under /licenses: it answers /licenses/:id.
    LicensePagesController,
    AuditPageController,
    SigningKeysPageController,
    TokensPageController,
    LicenseFilesPagesController,
    WebhooksPagesController,
    MailPagesController,
    StoresPageController,
    ProductsPageController,
    StaffPagesController,
    ReleasesPageController,
    DashboardNotFoundController,
  ],
  providers: [
    SavedViewsRepository,
    SavedViewsService,
    DashboardPassport,
    DashboardSessionStore,
    loginFormTokensProvider,
    inviteFormTokensProvider,
    CeremonyCookies,
  ],
})
export class DashboardModule {}
