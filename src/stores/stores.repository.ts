import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Brackets, DataSource, EntityManager } from 'typeorm';
import type { StoreEventStatus, StoreName } from '../licenses/store-names';
import { NEEDS_ATTENTION, StoreEvent } from './store-event.entity';
import type { StorePayment } from './store-action';
import { StorePlan } from './store-plan.entity';

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

/** Narrow, named queries on store plans and the store event ledger; each takes the caller's transaction when it has one. */
@Injectable()
export class StoresRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private plans(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(StorePlan);
  }

  private events(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(StoreEvent);
  }

  insertPlan(plan: Partial<StorePlan>, manager?: EntityManager): Promise<StorePlan> {
    return this.plans(manager).save(this.plans(manager).create(plan));
  }

  savePlan(plan: StorePlan, manager?: EntityManager): Promise<StorePlan> {
    return this.plans(manager).save(plan);
  }

  getPlan(id: number, manager?: EntityManager): Promise<StorePlan | null> {
    return this.plans(manager).findOne({ where: { id }, relations: { product: true } });
  }

  /** The plan, locked for the rest of the transaction (an update or delete and its audit entry). */
  lockPlan(id: number, manager: EntityManager): Promise<StorePlan | null> {
    return this.plans(manager)
      .createQueryBuilder('p')
      .innerJoinAndSelect('p.product', 'product')
      .where('p.id = :id', { id })
      .setLock('pessimistic_write', undefined, ['p'])
      .getOne();
  }

  planForPrice(store: StoreName, priceId: string, manager?: EntityManager): Promise<StorePlan | null> {
    return this.plans(manager).findOne({ where: { store, priceId }, relations: { product: true } });
  }

  listPlans(): Promise<StorePlan[]> {
    return this.plans().find({ relations: { product: true }, order: { id: 'ASC' } });
  }

  async deletePlan(id: number, manager?: EntityManager): Promise<boolean> {
    return ((await this.plans(manager).delete({ id })).affected ?? 0) > 0;
  }

  /** The event's row, new: ON CONFLICT DO NOTHING, so a second delivery (even a concurrent one) inserts nothing. */
  async insertEventOnce(event: Partial<StoreEvent>, manager: EntityManager): Promise<StoreEvent | null> {
    const rows: { id: string }[] = await manager.query(
      `INSERT INTO store_events (store, event_id, type, status, occurred_at, subscription_id, payment_id, payment_kind, customer_id, payload)
       VALUES ($1, $2, $3, 'pending', $4, $5, $6, $7, $8, $9) ON CONFLICT (store, event_id) DO NOTHING RETURNING id`,
      [
        event.store,
        event.eventId,
        event.type,
        event.occurredAt,
        event.subscriptionId,
        event.paymentId,
        event.paymentKind,
        event.customerId,
        JSON.stringify(event.payload),
      ],
    );
    return rows.length ? this.lockEvent(rows[0].id, manager) : null;
  }

  lockEventByStoreId(store: StoreName, eventId: string, manager: EntityManager): Promise<StoreEvent | null> {
    return this.events(manager).findOne({ where: { store, eventId }, lock: { mode: 'pessimistic_write' } });
  }

  getEvent(id: string): Promise<StoreEvent | null> {
    return this.events().findOne({ where: { id } });
  }

  lockEvent(id: string, manager: EntityManager): Promise<StoreEvent | null> {
    return this.events(manager).findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  async writeOutcome(id: string, outcome: StoreEventOutcome, manager: EntityManager): Promise<void> {
    await this.events(manager).update({ id }, outcome);
  }

  /** The events of a subscription waiting for its purchase, oldest (by the store's time) first, locked. */
  pendingOfSubscription(store: StoreName, subscriptionId: string, manager: EntityManager): Promise<StoreEvent[]> {
    return this.events(manager).find({
      where: { store, subscriptionId, status: 'pending' },
      order: { occurredAt: 'ASC', id: 'ASC' },
      lock: { mode: 'pessimistic_write' },
    });
  }

  /** The purchases and other events waiting for their buyer's e-mail, oldest (by the store's time) first. */
  pendingOfCustomer(store: StoreName, customerId: string, manager: EntityManager): Promise<StoreEvent[]> {
    return this.events(manager).find({
      where: { store, customerId, status: 'pending' },
      order: { occurredAt: 'ASC', id: 'ASC' },
    });
  }

  /** The newest event that told who the customer is (its payload holds the name and e-mail). */
  lastCustomerEvent(store: StoreName, customerId: string, manager: EntityManager): Promise<StoreEvent | null> {
    return this.events(manager)
      .createQueryBuilder('e')
      .where('e.store = :store AND e.customer_id = :customerId AND e.action = :action', { store, customerId, action: 'customer' })
      .orderBy('e.occurred_at', 'DESC', 'NULLS LAST')
      .addOrderBy('e.id', 'DESC')
      .getOne();
  }

  /** The price and quantity the newest purchase or plan change of the subscription applied, other than `exceptId`'s. */
  lastAppliedPrice(
    store: StoreName,
    subscriptionId: string,
    exceptId: string,
    manager: EntityManager,
  ): Promise<Pick<StoreEvent, 'priceId' | 'quantity'> | null> {
    return this.events(manager)
      .createQueryBuilder('e')
      .select(['e.priceId', 'e.quantity'])
      .where(
        'e.store = :store AND e.subscription_id = :subscriptionId AND e.status = :status AND e.price_id IS NOT NULL AND e.id <> :exceptId',
        {
          store,
          subscriptionId,
          status: 'processed',
          exceptId,
        },
      )
      .orderBy('e.occurred_at', 'DESC', 'NULLS LAST')
      .addOrderBy('e.id', 'DESC')
      .getOne();
  }

  /**
   * Serialises the events of one store customer, subscription or order until the transaction ends (a transaction-scoped
   * advisory lock): an event that waits and the one it waits for cannot miss each other by committing at once.
   */
  async lockStoreKey(kind: 'customer' | 'subscription' | 'order', store: StoreName, id: string, manager: EntityManager): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`store-${kind}:${store}:${id}`]);
  }

  /** The store's time of the newest event applied to the subscription, other than `exceptId`. */
  async lastAppliedAt(store: StoreName, subscriptionId: string, exceptId: string, manager: EntityManager): Promise<Date | null> {
    const rows: { at: Date | null }[] = await manager.query(
      `SELECT max(occurred_at) AS at FROM store_events
        WHERE store = $1 AND subscription_id = $2 AND status = 'processed' AND action IS NOT NULL AND id <> $3`,
      [store, subscriptionId, exceptId],
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
    const query = this.events(manager)
      .createQueryBuilder('e')
      .where('e.store = :store AND e.status = :status AND e.id <> :exceptId', { store, status: 'processed', exceptId })
      .andWhere(`e.action IN ('purchase', 'renewal')`)
      .andWhere(
        new Brackets((any) => {
          payments.forEach((p, i) =>
            any.orWhere(`(e.payment_kind = :kind${i} AND e.payment_id = :id${i})`, { [`kind${i}`]: p.kind, [`id${i}`]: p.id }),
          );
        }),
      );
    if (subscriptionId) query.andWhere('e.subscription_id = :subscriptionId', { subscriptionId });
    return query.orderBy('e.id', 'ASC').getOne();
  }

  /** The payloads of a subscription's own events (not its payments'), newest first: what the store last said of it. */
  async subscriptionPayloads(store: StoreName, subscriptionId: string, manager: EntityManager): Promise<Record<string, unknown>[]> {
    const rows: { payload: Record<string, unknown> }[] = await manager.query(
      `SELECT payload FROM store_events WHERE store = $1 AND subscription_id = $2 AND payment_kind IS DISTINCT FROM 'invoice'
        ORDER BY occurred_at DESC NULLS LAST, id DESC LIMIT 50`,
      [store, subscriptionId],
    );
    return rows.map((r) => r.payload);
  }

  /** The newest processed event that touched the licence. */
  lastActionOn(licenseId: number, manager: EntityManager): Promise<StoreEvent | null> {
    return this.events(manager)
      .createQueryBuilder('e')
      .where('e.license_id = :licenseId AND e.status = :status AND e.action IS NOT NULL', { licenseId, status: 'processed' })
      .orderBy('e.id', 'DESC')
      .getOne();
  }

  async listEvents(filter: StoreEventFilter, limit: number, offset: number): Promise<{ rows: StoreEvent[]; total: number }> {
    const query = this.events().createQueryBuilder('e');
    if (filter.store) query.andWhere('e.store = :store', { store: filter.store });
    if (filter.status) query.andWhere('e.status = :status', { status: filter.status });
    if (filter.licenseId !== undefined) query.andWhere('e.license_id = :licenseId', { licenseId: filter.licenseId });
    if (filter.needsAttention !== undefined)
      query.andWhere(filter.needsAttention ? `(${NEEDS_ATTENTION})` : `NOT coalesce(${NEEDS_ATTENTION}, false)`);
    const [rows, total] = await query.orderBy('e.id', 'DESC').take(limit).skip(offset).getManyAndCount();
    return { rows, total };
  }

  /** How many events need the seller's attention (the dashboard's count), from the partial index. */
  async countNeedingAttention(): Promise<number> {
    const rows: { n: number }[] = await this.dataSource.query(`SELECT count(*)::int AS n FROM store_events WHERE ${NEEDS_ATTENTION}`);
    return rows[0].n;
  }

  /** Notes a staff replay on the event's row (docs/stores.md, Needs attention). */
  async markReplayed(id: string, manager: EntityManager): Promise<void> {
    await this.events(manager).update({ id }, { replayedAt: () => 'now()' });
  }
}
