import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { JobsModule } from '../jobs/jobs.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { MailController } from './mail.controller';
import { MailRepository } from './mail.repository';
import { MailService } from './mail.service';
import { UnsubscribeController } from './unsubscribe.controller';

/** Customer e-mail (docs/mail.md): an outbox filled by the event fan-out, a sender on the job engine. */
@Module({
  imports: [AuditModule, JobsModule, WebhooksModule],
  controllers: [MailController, UnsubscribeController],
  providers: [MailRepository, MailService],
  exports: [MailService],
})
export class MailModule {}
