import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { LicensesModule } from '../licenses/licenses.module';
import { MetricsModule } from '../metrics/metrics.module';
import { ProductsModule } from '../products/products.module';
import { StoreEventsService } from './store-events.service';
import { StorePlansService } from './store-plans.service';
import { StoresAdminController } from './stores-admin.controller';
import { StoreWebhooksController } from './store-webhooks.controller';
import { StoresRepository } from './stores.repository';
import { LemonSqueezyStore } from './lemonsqueezy/lemonsqueezy-store';
import { PaddleStore } from './paddle/paddle-store';
import { StripeStore } from './stripe/stripe-store';

/** Licences from purchases (docs/stores.md): one adapter per store, the plans, the event ledger. Calls licence services only. */
@Module({
  imports: [AuditModule, LicensesModule, MetricsModule, ProductsModule],
  controllers: [StoreWebhooksController, StoresAdminController],
  providers: [StoresRepository, StorePlansService, StoreEventsService, StripeStore, PaddleStore, LemonSqueezyStore],
  exports: [StorePlansService, StoreEventsService],
})
export class StoresModule {}
