import { Module } from '@nestjs/common';
import { EventFanoutService } from './event-fanout.service';
import { EventOutboxRepository } from './event-outbox.repository';
import { EventRecorder } from './event-recorder';

/**
 * The event spine (docs/webhooks.md, The event spine): the recorder every use case tells its change to, the outbox it
 * writes, and the fan-out that hands committed events to the consumers (webhooks, mail). It knows no feature.
 */
@Module({
  providers: [EventRecorder, EventOutboxRepository, EventFanoutService],
  exports: [EventRecorder, EventFanoutService],
})
export class EventsModule {}
