import { Module } from '@nestjs/common';
import { ActivationModule } from '../activation/activation.module';
import { AuditModule } from '../audit/audit.module';
import { LicensesModule } from '../licenses/licenses.module';
import { MailModule } from '../mail/mail.module';
import { ProductsModule } from '../products/products.module';
import { KeyringModule } from '../keyring/keyring.module';
import { StatsModule } from '../stats/stats.module';
import { StoresModule } from '../stores/stores.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { AuthController } from './auth/auth.controller';
import { DashboardPassport } from './auth/dashboard-passport';
import { loginFormTokensProvider } from './auth/login-form-token';
import { FirstUserInitializer } from './first-user';
import { AuditPageController } from './pages/audit.controller';
import { BulkPagesController } from './pages/bulk.controller';
import { LicenseFilesPagesController } from './pages/license-files.controller';
import { LicensesPagesController } from './pages/licenses.controller';
import { MailPagesController } from './pages/mail.controller';
import { DashboardNotFoundController } from './pages/not-found.controller';
import { OverviewController } from './pages/overview.controller';
import { ProductsPageController } from './pages/products.controller';
import { ReleasesPageController } from './pages/releases.controller';
import { ReleasesModule } from '../releases/releases.module';
import { SigningKeysPageController } from './pages/signing-keys.controller';
import { StoresPageController } from './pages/stores.controller';
import { SavedViewsController } from './pages/saved-views.controller';
import { SavedViewsRepository } from './saved-views.repository';
import { TokensPageController } from './pages/tokens.controller';
import { WebhooksPagesController } from './pages/webhooks.controller';
import { DashboardSessionStore } from './session-store';
import { UsersRepository } from './users.repository';
import { UsersService } from './users.service';

/** The staff dashboard: server-rendered pages on top of the same services as the admin API (never its own SQL for licences). */
@Module({
  imports: [
    ActivationModule,
    AuditModule,
    KeyringModule,
    LicensesModule,
    MailModule,
    ProductsModule,
    ReleasesModule,
    StatsModule,
    StoresModule,
    WebhooksModule,
  ],
  // DashboardNotFoundController last: it catches only what no page matched.
  controllers: [
    AuthController,
    OverviewController,
    // Before the licence pages: /licenses/bulk and /licenses/views are not licence ids.
    BulkPagesController,
    SavedViewsController,
    LicensesPagesController,
    AuditPageController,
    SigningKeysPageController,
    TokensPageController,
    LicenseFilesPagesController,
    WebhooksPagesController,
    MailPagesController,
    StoresPageController,
    ProductsPageController,
    ReleasesPageController,
    DashboardNotFoundController,
  ],
  providers: [
    SavedViewsRepository,
    UsersRepository,
    UsersService,
    DashboardPassport,
    DashboardSessionStore,
    FirstUserInitializer,
    loginFormTokensProvider,
  ],
  exports: [UsersService],
})
export class DashboardModule {}
