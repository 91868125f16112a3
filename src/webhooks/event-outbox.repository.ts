import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { preparedQuery } from '../database/prepared-query';

/** A committed event not fanned out yet. */
export interface PendingEvent {
  id: string;
  type: string;
  productId: number | null;
  createdAt: Date;
  /** The webhook body (`{type, timestamp, data}`), for the fan-out's other consumers (mail). */
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
}

/** An endpoint as the fan-out sees it: active, with what it subscribed to. */
export interface FanoutEndpoint {
  id: number;
  events: string[];
  /** The products it is limited to (null: every product), for endpointReceives. */
  productIds: number[] | null;
  createdAt: Date;
}

/**
 * The events outbox (webhook_events) as the fan-out reads and settles it (docs/webhooks.md, The event spine). Style:
 * named SQL with typed rows (docs/architecture.md, Database style).
 */
@Injectable()
export class EventOutboxRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The idle poll's only statement: an index-only look at the pending events' partial index. */
  async anyPending(): Promise<boolean> {
    const { rows } = await preparedQuery<{ pending: boolean }>(
      this.dataSource.manager,
      'events-any-pending',
      `SELECT EXISTS (SELECT 1 FROM webhook_events WHERE fanned_out_at IS NULL) AS pending`,
      [],
    );
    return rows[0]?.pending === true;
  }

  /** Up to `limit` pending events, oldest first, locked; those another fan-out holds are skipped, not waited for. */
  async claimPending(limit: number, manager: EntityManager): Promise<PendingEvent[]> {
    const { rows } = await preparedQuery<{
      id: string;
      type: string;
      product_id: number | null;
      created_at: Date;
      payload: PendingEvent['payload'];
    }>(
      manager,
      'events-claim-pending-payload',
      `SELECT id, type, product_id, created_at, payload FROM webhook_events WHERE fanned_out_at IS NULL ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit],
    );
    return rows.map((r) => ({ id: r.id, type: r.type, productId: r.product_id, createdAt: r.created_at, payload: r.payload }));
  }

  async activeEndpoints(manager: EntityManager): Promise<FanoutEndpoint[]> {
    const { rows } = await preparedQuery<{ id: number; events: string[]; product_ids: number[] | null; created_at: Date }>(
      manager,
      'events-active-endpoints',
      `SELECT id, events, product_ids, created_at FROM webhook_endpoints WHERE active ORDER BY id`,
      [],
    );
    return rows.map((r) => ({ id: r.id, events: r.events, productIds: r.product_ids, createdAt: r.created_at }));
  }

  /**
   * One statement settles a batch: a pending delivery per (endpoint, event) pair (the unique pair makes a repeated
   * fan-out harmless), `heard` events marked fanned out, `unheard` ones (no endpoint takes them) deleted. Returns how
   * many deliveries are new.
   */
  async settle(
    deliveries: { endpointId: number; eventId: string }[],
    heard: string[],
    unheard: string[],
    manager: EntityManager,
  ): Promise<number> {
    const { rows } = await preparedQuery<{ created: number }>(
      manager,
      'events-settle',
      `WITH created AS (
         INSERT INTO webhook_deliveries (endpoint_id, event_id, next_attempt_at)
         SELECT d.endpoint_id, d.event_id, now() FROM unnest($1::int[], $2::varchar[]) AS d(endpoint_id, event_id)
         ON CONFLICT ON CONSTRAINT webhook_deliveries_endpoint_event_key DO NOTHING RETURNING id
       ), heard AS (
         UPDATE webhook_events SET fanned_out_at = now() WHERE id = ANY($3::varchar[])
       ), unheard AS (
         DELETE FROM webhook_events WHERE id = ANY($4::varchar[])
       )
       SELECT count(*)::int AS created FROM created`,
      [deliveries.map((d) => d.endpointId), deliveries.map((d) => d.eventId), heard, unheard],
    );
    return rows[0]?.created ?? 0;
  }
}
