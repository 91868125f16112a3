import type { Actor } from '../common/auth/actor';
import type { StoreName } from '../licenses/store-licenses/store-names';
import type { FailCode, ReceivedStoreEvent, StoreAdapter } from './store-action';
import type { StoreEvent } from './store-event.entity';

/** Thrown inside an event's savepoint: the licence change is undone and the event is stored failed with this code and message. */
export class EventFailed extends Error {
  constructor(
    readonly code: FailCode,
    message: string,
  ) {
    super(message);
  }
}

export const storeActor = (store: StoreName): Actor => ({ type: 'store', name: `store:${store}`, ip: null });

/** A ledger row read back as the event its adapter received. */
export function fromRow(row: StoreEvent, adapter: StoreAdapter): ReceivedStoreEvent {
  return {
    eventId: row.eventId,
    type: row.type,
    occurredAt: row.occurredAt,
    livemode: adapter.isLive(row.payload),
    subscriptionId: row.subscriptionId,
    paymentId: row.paymentId,
    paymentKind: row.paymentKind,
    customerId: row.customerId,
    payload: row.payload,
  };
}
