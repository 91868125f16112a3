import type { EntityManager } from 'typeorm';

/** A committed event as a consumer receives it: the event's own data, nothing re-read. */
export interface PendingEvent {
  id: string;
  type: string;
  /** The product the event concerns (null for events about no product). */
  productId: number | null;
  createdAt: Date;
  /** The webhook body (`{type, timestamp, data}`): the licence as it was after the change, or the event's details. */
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
}

/**
 * What turns events into work after commit (webhook deliveries, customer mail): registered with
 * EventFanoutService.addConsumer. A pass hands each consumer every claimed event inside the pass's transaction; what it
 * writes commits with the pass, once per event (docs/webhooks.md, The event spine).
 */
export interface EventConsumer {
  /** Returns the ids of the events it still refers to (a webhook delivery reads its body from the outbox); the rest are deleted. */
  consume(events: PendingEvent[], manager: EntityManager): Promise<readonly string[]>;
  /** Called once the pass that handed it events has committed: the moment to start the work it queued. */
  committed?(): void;
}
