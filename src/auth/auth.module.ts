import { Global, Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { ProductsModule } from '../products/products.module';
import { AdminAuthGuard } from './admin-auth.guard';
import { AdminCredentials } from './admin-credentials';
import { AdminTokensController } from './admin-tokens.controller';
import { AdminTokensRepository } from './admin-tokens.repository';
import { AdminTokensService } from './admin-tokens.service';
import { ApiKeys } from './api-keys';

/**
 * Admin credentials: API_KEY keys, scoped tokens, and the guard behind @AdminRoute. Global, because every
 * feature's admin controller instantiates the guard in its own module.
 */
@Global()
@Module({
  imports: [AuditModule, ProductsModule],
  controllers: [AdminTokensController],
  providers: [ApiKeys, AdminTokensRepository, AdminCredentials, AdminAuthGuard, AdminTokensService],
  exports: [AdminCredentials, AdminAuthGuard, AdminTokensService],
})
export class AuthModule {}
