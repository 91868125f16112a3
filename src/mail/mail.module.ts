import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { JobsModule } from '../jobs/jobs.module';
import { MailController } from './mail.controller';
import { MailRepository } from './mail.repository';
import { MailService } from './mail.service';
import { UnsubscribeController } from './unsubscribe.controller';

/** Customer e-mail (docs/mail.md): an outbox filled from the events the fan-out hands it (a consumer of the spine), a sender on the job engine. */
@Module({
  imports: [EventsModule, JobsModule],
  controllers: [MailController, UnsubscribeController],
  providers: [MailRepository, MailService],
  exports: [MailService],
})
export class MailModule {}
