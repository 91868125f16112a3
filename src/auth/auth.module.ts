import { Global, Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { ProductsModule } from '../products/products.module';
import { ADMIN_AUTHORIZER } from '../common/auth/admin-route.guard';
import { CredentialAuthorizer } from './admin-authorizer';
import { AdminCredentials } from './admin-credentials';
import { AdminTokensController } from './admin-tokens.controller';
import { AdminTokensRepository } from './admin-tokens.repository';
import { AdminTokensService } from './admin-tokens.service';
import { ApiKeys } from './api-keys';

/**
 * Admin credentials: API_KEY keys, scoped tokens, and the authorizer behind @AdminRoute's guard. Global because
 * every feature's admin controller instantiates that guard in its own module, and a feature importing AuthModule
 * would close a circle (auth records audit entries and checks products; docs/architecture.md, Module boundaries).
 */
@Global()
@Module({
  imports: [EventsModule, ProductsModule],
  controllers: [AdminTokensController],
  providers: [
    ApiKeys,
    AdminTokensRepository,
    AdminCredentials,
    { provide: ADMIN_AUTHORIZER, useClass: CredentialAuthorizer },
    AdminTokensService,
  ],
  exports: [ADMIN_AUTHORIZER, AdminTokensService],
})
export class AuthModule {}
