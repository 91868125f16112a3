import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { LicensesModule } from '../licenses/licenses.module';
import { MetricsModule } from '../metrics/metrics.module';
import { ProductsModule } from '../products/products.module';
import { StoreEventActions } from './store-event-actions';
import { StoreEventsService } from './store-events.service';
import { StorePlansService } from './store-plans.service';
import { StoresAdminController } from './stores-admin.controller';
import { StoreWebhooksController } from './store-webhooks.controller';
import { StoreEventsRepository } from './store-events.repository';
import { StorePlansRepository } from './store-plans.repository';
import { LemonSqueezyStore } from './lemonsqueezy/lemonsqueezy-store';
import { PaddleStore } from './paddle/paddle-store';
import { StripeStore } from './stripe/stripe-store';

/** One adapter per store: its signature check and its events' translation (docs/stores.md). */
const STORE_ADAPTERS = [StripeStore, PaddleStore, LemonSqueezyStore];

/** Licences from purchases (docs/stores.md): one adapter per store, the plans, the event ledger. Calls licence services only. */
@Module({
  imports: [EventsModule, LicensesModule, MetricsModule, ProductsModule],
  controllers: [StoreWebhooksController, StoresAdminController],
  providers: [StorePlansRepository, StoreEventsRepository, StorePlansService, StoreEventActions, StoreEventsService, ...STORE_ADAPTERS],
  exports: [StorePlansService, StoreEventsService],
})
export class StoresModule {}
