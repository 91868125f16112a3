import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { EventsModule } from '../events/events.module';
import { JobsModule } from '../jobs/jobs.module';
import { ProductsModule } from '../products/products.module';
import { WebhookDrain } from './webhook-drain';
import { WebhookSecrets } from './webhook-secrets';
import { WebhooksController } from './webhooks.controller';
import { WebhooksRepository } from './webhooks.repository';
import { WebhooksService } from './webhooks.service';

/** Webhook endpoints and delivery on the job engine, a consumer of the event spine (docs/webhooks.md). */
@Module({
  imports: [EventsModule, JobsModule, MetricsModule, ProductsModule],
  controllers: [WebhooksController],
  providers: [WebhooksRepository, WebhooksService, WebhookSecrets, WebhookDrain],
  exports: [WebhooksService],
})
export class WebhooksModule {}
