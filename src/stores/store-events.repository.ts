import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { lockForTransaction } from '../database/advisory-lock';
import { rowShape, type RowOf } from '../database/row-shape';
import { joinSql, raw, runAssembled, type Sql, sql } from '../database/statement';
import type { StoreEventStatus, StoreName } from '../licenses/store-licenses/store-names';
import { NEEDS_ATTENTION, StoreEvent } from './store-event.entity';
import type { StorePayment } from './store-action';

export interface StoreEventFilter {
  store?: StoreName;
  status?: StoreEventStatus;
  licenseId?: number;
  /** true: only the events that need the seller's attention; false: only the others (docs/stores.md, Needs attention). */
  needsAttention?: boolean;
}

/** What a store event's processing decided, written back onto its row. */
export type StoreEventOutcome = Pick<StoreEvent, 'status' | 'error' | 'reasonCode'> &
  Partial<Pick<StoreEvent, 'licenseId' | 'action' | 'periodStart' | 'priceId' | 'quantity'>>;

/** A store_events row read into a StoreEvent. */
const EVENT_ROWS = rowShape(
  () => new StoreEvent(),
  `id, store, event_id, type, status, received_at, occurred_at, subscription_id, customer_id, price_id, quantity, action,
   payment_id, payment_kind, period_start, license_id, error, reason_code, replayed_at, payload`,
);

const COLUMNS = raw(EVENT_ROWS.columns);

/** The columns an outcome may set, by the entity's property name. */
const OUTCOME_COLUMNS: Record<keyof StoreEventOutcome, string> = {
  status: 'status',
  error: 'error',
  reasonCode: 'reason_code',
  licenseId: 'license_id',
  action: 'action',
  periodStart: 'period_start',
  priceId: 'price_id',
  quantity: 'quantity',
};

/**
 * The store event ledger (store_events): each method is one named query on the caller's transaction when it has one.
 * Style: named SQL with typed rows, read through their row shape (docs/architecture.md, Database style): the ledger needs
 * `ON CONFLICT DO NOTHING` and row locks.
 */
@Injectable()
export class StoreEventsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The ledger's statements are composed from its filters and outcome fields, so each is named after its text. */
  private async rows<T extends object = never>(statement: Sql, manager?: EntityManager): Promise<T[]> {
    return runAssembled<T>(manager ?? this.dataSource.manager, statement);
  }

  private async events(statement: Sql, manager?: EntityManager): Promise<StoreEvent[]> {
    return (await this.rows<RowOf<typeof EVENT_ROWS>>(statement, manager)).map(EVENT_ROWS.fromRow);
  }

  private async event(statement: Sql, manager?: EntityManager): Promise<StoreEvent | null> {
    return (await this.events(statement, manager))[0] ?? null;
  }

  /** The event's row, new: ON CONFLICT DO NOTHING, so a second delivery (even a concurrent one) inserts nothing. */
  insertEventOnce(event: Partial<StoreEvent>, manager: EntityManager): Promise<StoreEvent | null> {
    return this.event(
      sql`INSERT INTO store_events (store, event_id, type, status, occurred_at, subscription_id, payment_id, payment_kind, customer_id, payload)
          VALUES (${event.store}, ${event.eventId}, ${event.type}, 'pending', ${event.occurredAt}, ${event.subscriptionId},
                  ${event.paymentId}, ${event.paymentKind}, ${event.customerId}, ${JSON.stringify(event.payload)})
          ON CONFLICT (store, event_id) DO NOTHING RETURNING ${COLUMNS}`,
      manager,
    );
  }

  lockEventByStoreId(store: StoreName, eventId: string, manager: EntityManager): Promise<StoreEvent | null> {
    return this.event(sql`SELECT ${COLUMNS} FROM store_events WHERE store = ${store} AND event_id = ${eventId} FOR UPDATE`, manager);
  }

  getEvent(id: string): Promise<StoreEvent | null> {
    return this.event(sql`SELECT ${COLUMNS} FROM store_events WHERE id = ${id}`);
  }

  lockEvent(id: string, manager: EntityManager): Promise<StoreEvent | null> {
    return this.event(sql`SELECT ${COLUMNS} FROM store_events WHERE id = ${id} FOR UPDATE`, manager);
  }

  async writeOutcome(id: string, outcome: StoreEventOutcome, manager: EntityManager): Promise<void> {
    const sets = (Object.keys(OUTCOME_COLUMNS) as (keyof StoreEventOutcome)[])
      .filter((key) => outcome[key] !== undefined)
      .map((key) => sql`${raw(OUTCOME_COLUMNS[key])} = ${outcome[key]}`);
    await this.rows(sql`UPDATE store_events SET ${joinSql(sets, ', ')} WHERE id = ${id}`, manager);
  }

  /** The events of a subscription waiting for its purchase, oldest (by the store's time) first, locked. */
  pendingOfSubscription(store: StoreName, subscriptionId: string, manager: EntityManager): Promise<StoreEvent[]> {
    return this.events(
      sql`SELECT ${COLUMNS} FROM store_events
           WHERE store = ${store} AND subscription_id = ${subscriptionId} AND status = 'pending'
           ORDER BY occurred_at, id FOR UPDATE`,
      manager,
    );
  }

  /** The purchases and other events waiting for their buyer's e-mail, oldest (by the store's time) first. */
  pendingOfCustomer(store: StoreName, customerId: string, manager: EntityManager): Promise<StoreEvent[]> {
    return this.events(
      sql`SELECT ${COLUMNS} FROM store_events
           WHERE store = ${store} AND customer_id = ${customerId} AND status = 'pending'
           ORDER BY occurred_at, id`,
      manager,
    );
  }

  /** The newest event that told who the customer is (its payload holds the name and e-mail). */
  lastCustomerEvent(store: StoreName, customerId: string, manager: EntityManager): Promise<StoreEvent | null> {
    return this.event(
      sql`SELECT ${COLUMNS} FROM store_events
           WHERE store = ${store} AND customer_id = ${customerId} AND action = 'customer'
           ORDER BY occurred_at DESC NULLS LAST, id DESC LIMIT 1`,
      manager,
    );
  }

  /** The price and quantity the newest purchase or plan change of the subscription applied, other than `exceptId`'s. */
  lastAppliedPrice(
    store: StoreName,
    subscriptionId: string,
    exceptId: string,
    manager: EntityManager,
  ): Promise<Pick<StoreEvent, 'priceId' | 'quantity'> | null> {
    return this.event(
      sql`SELECT ${COLUMNS} FROM store_events
           WHERE store = ${store} AND subscription_id = ${subscriptionId} AND status = 'processed' AND price_id IS NOT NULL
             AND id <> ${exceptId}
           ORDER BY occurred_at DESC NULLS LAST, id DESC LIMIT 1`,
      manager,
    );
  }

  /**
   * Serialises the events of one store customer, subscription or order until the transaction ends (a transaction-scoped
   * advisory lock): an event that waits and the one it waits for cannot miss each other by committing at once.
   */
  lockStoreKey(kind: 'customer' | 'subscription' | 'order', store: StoreName, id: string, manager: EntityManager): Promise<void> {
    return lockForTransaction(manager, `store-${kind}:${store}:${id}`);
  }

  /** The store's time of the newest event applied to the subscription, other than `exceptId`. */
  async lastAppliedAt(store: StoreName, subscriptionId: string, exceptId: string, manager: EntityManager): Promise<Date | null> {
    const rows = await this.rows<{ at: Date | null }>(
      sql`SELECT max(occurred_at) AS at FROM store_events
           WHERE store = ${store} AND subscription_id = ${subscriptionId} AND status = 'processed' AND action IS NOT NULL
             AND id <> ${exceptId}`,
      manager,
    );
    return rows[0]?.at ?? null;
  }

  /**
   * The processed purchase or renewal that paid with one of `payments` (each matched with its own kind) and touched a
   * licence: what a refund undoes (docs/stores.md, Refunds). With `subscriptionId`, only a payment of that subscription.
   */
  async paidWith(
    store: StoreName,
    payments: StorePayment[],
    subscriptionId: string | null,
    manager: EntityManager,
    exceptId: string,
  ): Promise<StoreEvent | null> {
    if (payments.length === 0) return null;
    const paidBy = joinSql(
      payments.map((p) => sql`(payment_kind = ${p.kind} AND payment_id = ${p.id})`),
      ' OR ',
    );
    const ofSubscription = subscriptionId ? sql` AND subscription_id = ${subscriptionId}` : raw('');
    return this.event(
      sql`SELECT ${COLUMNS} FROM store_events
           WHERE store = ${store} AND status = 'processed' AND id <> ${exceptId} AND action IN ('purchase', 'renewal')
             AND (${paidBy})${ofSubscription}
           ORDER BY id LIMIT 1`,
      manager,
    );
  }

  /** The payloads of a subscription's own events (not its payments'), newest first: what the store last said of it. */
  async subscriptionPayloads(store: StoreName, subscriptionId: string, manager: EntityManager): Promise<Record<string, unknown>[]> {
    const rows = await this.rows<{ payload: Record<string, unknown> }>(
      sql`SELECT payload FROM store_events
           WHERE store = ${store} AND subscription_id = ${subscriptionId} AND payment_kind IS DISTINCT FROM 'invoice'
           ORDER BY occurred_at DESC NULLS LAST, id DESC LIMIT 50`,
      manager,
    );
    return rows.map((r) => r.payload);
  }

  /** The newest processed event that touched the licence. */
  lastActionOn(licenseId: number, manager: EntityManager): Promise<StoreEvent | null> {
    return this.event(
      sql`SELECT ${COLUMNS} FROM store_events
           WHERE license_id = ${licenseId} AND status = 'processed' AND action IS NOT NULL
           ORDER BY id DESC LIMIT 1`,
      manager,
    );
  }

  async listEvents(filter: StoreEventFilter, limit: number, offset: number): Promise<{ rows: StoreEvent[]; total: number }> {
    const conditions: Sql[] = [raw('true')];
    if (filter.store) conditions.push(sql`store = ${filter.store}`);
    if (filter.status) conditions.push(sql`status = ${filter.status}`);
    if (filter.licenseId !== undefined) conditions.push(sql`license_id = ${filter.licenseId}`);
    if (filter.needsAttention !== undefined)
      conditions.push(raw(filter.needsAttention ? `(${NEEDS_ATTENTION})` : `NOT coalesce(${NEEDS_ATTENTION}, false)`));
    const where = joinSql(conditions, ' AND ');
    const rows = await this.events(
      sql`SELECT ${COLUMNS} FROM store_events WHERE ${where} ORDER BY id DESC LIMIT ${limit} OFFSET ${offset}`,
    );
    const [{ n }] = await this.rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM store_events WHERE ${where}`);
    return { rows, total: n };
  }

  /** How many events need the seller's attention (the dashboard's count), from the partial index. */
  async countNeedingAttention(): Promise<number> {
    const [{ n }] = await this.rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM store_events WHERE ${raw(NEEDS_ATTENTION)}`);
    return n;
  }

  /** Notes a staff replay on the event's row (docs/stores.md, Needs attention); returns when, as stored. */
  async markReplayed(id: string, manager: EntityManager): Promise<Date | null> {
    const rows = await this.rows<{ replayed_at: Date }>(
      sql`WITH marked AS (UPDATE store_events SET replayed_at = now() WHERE id = ${id} RETURNING replayed_at) SELECT replayed_at FROM marked`,
      manager,
    );
    return rows[0]?.replayed_at ?? null;
  }
}
