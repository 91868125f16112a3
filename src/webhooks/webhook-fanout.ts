import type { PendingEvent } from '../events/event-consumer';
import { endpointReceives } from './endpoint-receives';
import { ALL_EVENTS } from './webhook-events';

/** An endpoint as the fan-out sees it: active, with what it subscribed to. */
export interface FanoutEndpoint {
  id: number;
  events: string[];
  /** The products it is limited to (null: every product), for endpointReceives. */
  productIds: number[] | null;
  createdAt: Date;
}

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

/** Deliveries for a batch of events: one per (endpoint, event) pair, and which events some endpoint takes. */
export function fanOut(events: PendingEvent[], endpoints: FanoutEndpoint[]) {
  const deliveries: { endpointId: number; eventId: string }[] = [];
  const heard: string[] = [];
  for (const event of events) {
    const takers = endpoints.filter((endpoint) => endpointTakes(endpoint, event));
    for (const endpoint of takers) deliveries.push({ endpointId: endpoint.id, eventId: event.id });
    if (takers.length) heard.push(event.id);
  }
  return { deliveries, heard };
}
