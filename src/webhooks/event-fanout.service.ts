import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { JobsService } from '../jobs/jobs.service';
import { endpointReceives } from './endpoint-receives';
import { EventOutboxRepository, FanoutEndpoint, PendingEvent } from './event-outbox.repository';
import { ALL_EVENTS } from './webhook-events';

export type { PendingEvent } from './event-outbox.repository';
import { DRAIN_QUEUE } from './webhooks.service';

/** Events claimed per pass; a full batch is followed at once by the next pass. */
export const FANOUT_BATCH = 100;
/** The idle poll: one indexed EXISTS per instance this often, so an event waits at most this long for its fan-out. */
export const FANOUT_POLL_MS = 200;

/**
 * The one place endpoints are chosen per event (docs/webhooks.md, The event spine): an endpoint active at fan-out,
 * existing when the event happened, subscribed to its type or to everything, and receiving the event's product
 * (endpointReceives: an endpoint limited to products never hears of another product, nor of events without one).
 */
export function endpointTakes(endpoint: FanoutEndpoint, event: PendingEvent): boolean {
  if (endpoint.createdAt.getTime() > event.createdAt.getTime()) return false;
  if (!endpointReceives(endpoint.productIds, event.productId)) return false;
  return endpoint.events.includes(event.type) || endpoint.events.includes(ALL_EVENTS);
}

/** Deliveries for a batch of events: one per (endpoint, event) pair, and which events no endpoint takes. */
export function fanOut(events: PendingEvent[], endpoints: FanoutEndpoint[]) {
  const deliveries: { endpointId: number; eventId: string }[] = [];
  const heard: string[] = [];
  const unheard: string[] = [];
  for (const event of events) {
    const takers = endpoints.filter((endpoint) => endpointTakes(endpoint, event));
    for (const endpoint of takers) deliveries.push({ endpointId: endpoint.id, eventId: event.id });
    (takers.length ? heard : unheard).push(event.id);
  }
  return { deliveries, heard, unheard };
}

/**
 * Another consumer of the same pass (mail: docs/mail.md, When mail is sent): it sees every claimed event, inside the
 * pass's transaction, before unheard events are deleted; what it writes commits with the pass, once per event.
 */
export interface EventConsumer {
  consume(events: PendingEvent[], manager: EntityManager): Promise<void>;
}

/**
 * Turns committed events into webhook deliveries after commit (docs/webhooks.md, The event spine). Every instance polls;
 * a pass claims up to FANOUT_BATCH events with SKIP LOCKED (two instances never take the same event, a crashed pass
 * leaves its events pending), writes their deliveries in one statement and wakes the drain worker once.
 */
@Injectable()
export class EventFanoutService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('EventFanout');
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  private readonly consumers: EventConsumer[] = [];

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly outbox: EventOutboxRepository,
    private readonly jobs: JobsService,
  ) {}

  onApplicationBootstrap(): void {
    this.next(0);
  }

  async onModuleDestroy(): Promise<void> {
    await this.stop();
  }

  /** Stops polling and waits for a running pass (before the pool closes). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Adds a consumer to every pass (called while the app initialises). */
  addConsumer(consumer: EventConsumer): void {
    this.consumers.push(consumer);
  }

  /** One pass: fans out up to FANOUT_BATCH pending events; returns how many it claimed. */
  async fanOutPending(): Promise<number> {
    if (!(await this.outbox.anyPending())) return 0;
    return this.dataSource.transaction(async (manager) => {
      const events = await this.outbox.claimPending(FANOUT_BATCH, manager);
      if (events.length === 0) return 0;
      for (const consumer of this.consumers) await consumer.consume(events, manager);
      const { deliveries, heard, unheard } = fanOut(events, await this.outbox.activeEndpoints(manager));
      const created = await this.outbox.settle(deliveries, heard, unheard, manager);
      // One wake-up per pass, committed with the deliveries it announces.
      if (created > 0) await this.jobs.send(DRAIN_QUEUE, {}, { manager });
      return events.length;
    });
  }

  private next(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.pass().finally(() => (this.running = undefined));
    }, delayMs);
  }

  private async pass(): Promise<void> {
    let claimed = 0;
    try {
      claimed = await this.fanOutPending();
    } catch (err) {
      this.logger.warn(`event fan-out failed, retrying: ${(err as Error).message}`);
    }
    this.next(claimed >= FANOUT_BATCH ? 0 : FANOUT_POLL_MS);
  }
}
