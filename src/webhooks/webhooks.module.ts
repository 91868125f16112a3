import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { AuditModule } from '../audit/audit.module';
import { JobsModule } from '../jobs/jobs.module';
import { LicensesModule } from '../licenses/licenses.module';
import { ProductsModule } from '../products/products.module';
import { EventFanoutService } from './event-fanout.service';
import { EventOutboxRepository } from './event-outbox.repository';
import { WebhookSecrets } from './webhook-secrets';
import { WebhooksController } from './webhooks.controller';
import { WebhooksRepository } from './webhooks.repository';
import { WebhooksService } from './webhooks.service';

/** Webhook endpoints, the event outbox and delivery on the job engine (docs/webhooks.md). */
@Module({
  imports: [AuditModule, JobsModule, LicensesModule, MetricsModule, ProductsModule],
  controllers: [WebhooksController],
  providers: [WebhooksRepository, WebhooksService, WebhookSecrets, EventOutboxRepository, EventFanoutService],
  exports: [WebhooksService, EventFanoutService],
})
export class WebhooksModule {}
