import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { preparedQuery } from '../database/prepared-query';
import type { FanoutEndpoint } from './webhook-fanout';
import { DeliveryStatus, WebhookDelivery, WebhookEndpoint } from './webhook.entities';

/** What an attempt needs, read when it is claimed. */
export interface ClaimedDelivery {
  id: string;
  attempts: number;
  endpointId: number;
  url: string;
  /** As stored: sealed (webhook-secrets.ts), or plain text from before the upgrade. */
  storedSecret: string;
  endpointActive: boolean;
  eventId: string;
  eventType: string;
  eventCreatedAt: Date;
  payload: Record<string, unknown>;
}

interface ClaimedRow {
  id: string;
  attempts: number;
  endpoint_id: number;
  url: string;
  secret: string;
  active: boolean;
  event_id: string;
  type: string;
  event_created_at: Date;
  payload: Record<string, unknown>;
}

/**
 * A claimed attempt holds its delivery this long; a crashed sender's attempt is taken up again after it. Longer than
 * the longest attempt (DNS bounded to 5 s, the request to 10 s, then one UPDATE), so no two sends of it overlap.
 */
export const ATTEMPT_LEASE_SECONDS = 30;

/**
 * The webhooks module's tables (webhook_endpoints, webhook_deliveries). A delivery sends its event's body from the
 * spine's outbox (event_outbox), which keeps the events a delivery refers to. Style: named SQL with typed rows, mapped
 * by hand (docs/architecture.md, Database style).
 */
@Injectable()
export class WebhooksRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async listEndpoints(): Promise<WebhookEndpoint[]> {
    const rows = await this.dataSource.query<EndpointRow[]>(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints ORDER BY id`);
    return rows.map(endpointFromRow);
  }

  /** Within a transaction (`manager`), the endpoint row is locked (FOR UPDATE). */
  async getEndpoint(id: number, manager?: EntityManager): Promise<WebhookEndpoint | null> {
    const rows = await (manager ?? this.dataSource.manager).query<EndpointRow[]>(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1${manager ? ' FOR UPDATE' : ''}`,
      [id],
    );
    return rows.length ? endpointFromRow(rows[0]) : null;
  }

  async insertEndpoint(
    endpoint: Pick<WebhookEndpoint, 'url' | 'events' | 'description' | 'active' | 'secret' | 'productIds'>,
    manager: EntityManager,
  ): Promise<WebhookEndpoint> {
    const rows = await manager.query<EndpointRow[]>(
      `INSERT INTO webhook_endpoints (url, events, description, active, secret, product_ids) VALUES ($1, $2::text[], $3, $4, $5, $6::int[])
       RETURNING ${ENDPOINT_COLUMNS}`,
      [endpoint.url, endpoint.events, endpoint.description, endpoint.active, endpoint.secret, endpoint.productIds],
    );
    return endpointFromRow(rows[0]);
  }

  /** Writes the changeable columns of a locked endpoint (url, events, description, active, secret, updated_at). */
  async updateEndpoint(endpoint: WebhookEndpoint, manager: EntityManager): Promise<WebhookEndpoint> {
    const rows = await manager.query<EndpointRow[]>(
      `WITH changed AS (
         UPDATE webhook_endpoints SET url = $2, events = $3::text[], description = $4, active = $5, secret = $6, updated_at = $7
         WHERE id = $1 RETURNING ${ENDPOINT_COLUMNS})
       SELECT * FROM changed`,
      [endpoint.id, endpoint.url, endpoint.events, endpoint.description, endpoint.active, endpoint.secret, endpoint.updatedAt],
    );
    return endpointFromRow(rows[0]);
  }

  async deleteEndpoint(id: number, manager: EntityManager): Promise<void> {
    await manager.query(`DELETE FROM webhook_endpoints WHERE id = $1`, [id]);
  }

  /** Stores an endpoint's sealed secret (webhook-secrets.ts). */
  async setSecret(id: number, sealed: string, manager: EntityManager): Promise<void> {
    await manager.query(`UPDATE webhook_endpoints SET secret = $2 WHERE id = $1`, [id, sealed]);
  }

  /** Endpoints whose secret is still the plain text an earlier version stored. */
  plainSecrets(prefix: string): Promise<{ id: number; secret: string }[]> {
    return this.dataSource.query(`SELECT id, secret FROM webhook_endpoints WHERE starts_with(secret, $1) ORDER BY id`, [prefix]);
  }

  /** Replaces a plain secret with its sealed form unless someone changed it meanwhile (a rotation, another instance). */
  async replacePlainSecret(id: number, plain: string, sealed: string): Promise<boolean> {
    const rows = await this.dataSource.query<{ id: number }[]>(
      `WITH sealed AS (UPDATE webhook_endpoints SET secret = $3 WHERE id = $1 AND secret = $2 RETURNING id) SELECT id FROM sealed`,
      [id, plain, sealed],
    );
    return rows.length > 0;
  }

  /** Claims the oldest due attempt of any pending delivery that no one else is claiming right now (SKIP LOCKED). */
  async claimNextDue(): Promise<ClaimedDelivery | null> {
    return (await this.claimDue(1))[0] ?? null;
  }

  /**
   * Claims up to `limit` due attempts, oldest first, in one statement (SKIP LOCKED: two workers or instances never
   * claim the same one). Each claim is a lease: unfinished when it ends, the attempt is due again.
   */
  async claimDue(limit: number): Promise<ClaimedDelivery[]> {
    const { rows } = await preparedQuery<ClaimedRow>(
      this.dataSource.manager,
      'webhook-deliveries-claim',
      `WITH due AS (
         SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= now()
         ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED),
       claimed AS (
         UPDATE webhook_deliveries d SET attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => $2)
         FROM due WHERE d.id = due.id
         RETURNING d.id, d.attempts, d.endpoint_id, d.event_id, d.created_at)
       SELECT c.id, c.attempts, c.endpoint_id, e.url, e.secret, e.active, c.event_id, ev.type, ev.created_at AS event_created_at, ev.payload
       FROM claimed c JOIN webhook_endpoints e ON e.id = c.endpoint_id JOIN event_outbox ev ON ev.id = c.event_id
       ORDER BY c.created_at, c.id`,
      [limit, ATTEMPT_LEASE_SECONDS],
    );
    return rows.map((r) => ({
      id: String(r.id),
      attempts: r.attempts,
      endpointId: r.endpoint_id,
      url: r.url,
      storedSecret: r.secret,
      endpointActive: r.active,
      eventId: r.event_id,
      eventType: r.type,
      eventCreatedAt: r.event_created_at,
      payload: r.payload,
    }));
  }

  /**
   * Records the outcome of the claimed attempt `attempt`; false (nothing written) when the delivery moved on without
   * it (its lease ran out and another worker claimed a later attempt), so a late finisher never overwrites that one.
   */
  async finishAttempt(
    deliveryId: string,
    attempt: number,
    outcome: { status: DeliveryStatus; statusCode: number | null; error: string | null; nextAttemptInSeconds: number | null },
    manager: EntityManager = this.dataSource.manager,
  ): Promise<boolean> {
    const { rows } = await preparedQuery<{ id: string }>(
      manager,
      'webhook-delivery-finish',
      `WITH finished AS (
         UPDATE webhook_deliveries SET status = $2::varchar, last_status_code = $3::int, last_error = $4::varchar,
           next_attempt_at = CASE WHEN $5::int IS NULL THEN NULL ELSE now() + make_interval(secs => $5::int) END,
           delivered_at = CASE WHEN $2::varchar = 'delivered' THEN now() ELSE delivered_at END
         WHERE id = $1 AND attempts = $6 AND status = 'pending' RETURNING id)
       SELECT id FROM finished`,
      [deliveryId, outcome.status, outcome.statusCode, outcome.error?.slice(0, 500) ?? null, outcome.nextAttemptInSeconds, attempt],
    );
    return rows.length > 0;
  }

  /** A failed delivery goes back to pending, due now; false when it is not failed. */
  async reopenFailed(deliveryId: string, manager: EntityManager): Promise<boolean> {
    const rows = await manager.query<{ id: string }[]>(
      // As a CTE: TypeORM answers a bare UPDATE ... RETURNING with [rows, count], not rows.
      `WITH reopened AS (UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now() WHERE id = $1 AND status = 'failed' RETURNING id)
       SELECT id FROM reopened`,
      [deliveryId],
    );
    return rows.length > 0;
  }

  /** A delivery and its event's type, or null. */
  async getDelivery(id: string, manager?: EntityManager): Promise<DeliveryWithType | null> {
    const rows = await (manager ?? this.dataSource.manager).query<DeliveryRow[]>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN event_outbox ev ON ev.id = d.event_id WHERE d.id = $1`,
      [id],
    );
    return rows.length ? deliveryFromRow(rows[0]) : null;
  }

  /** One page of an endpoint's deliveries, newest first, and how many it has. */
  async listDeliveries(endpointId: number, limit: number, offset: number): Promise<{ rows: DeliveryWithType[]; total: number }> {
    const [rows, [{ total }]] = await Promise.all([
      this.dataSource.query<DeliveryRow[]>(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN event_outbox ev ON ev.id = d.event_id
         WHERE d.endpoint_id = $1 ORDER BY d.id DESC LIMIT $2 OFFSET $3`,
        [endpointId, limit, offset],
      ),
      this.dataSource.query<{ total: number }[]>(`SELECT count(*)::int AS total FROM webhook_deliveries WHERE endpoint_id = $1`, [
        endpointId,
      ]),
    ]);
    return { rows: rows.map(deliveryFromRow), total };
  }

  /** Queue depth and the age of the oldest pending delivery, for the metrics. */
  async pendingSummary(): Promise<{ pending: number; oldestSeconds: number }> {
    const [row] = await this.dataSource.query<{ pending: number; oldest: number | null }[]>(
      `SELECT count(*)::int AS pending, extract(epoch FROM now() - min(created_at))::float8 AS oldest FROM webhook_deliveries WHERE status = 'pending'`,
    );
    return { pending: row.pending, oldestSeconds: row.oldest ?? 0 };
  }

  /** The active endpoints, as the fan-out chooses among them. */
  async activeEndpoints(manager: EntityManager): Promise<FanoutEndpoint[]> {
    const { rows } = await preparedQuery<{ id: number; events: string[]; product_ids: number[] | null; created_at: Date }>(
      manager,
      'webhooks-active-endpoints',
      `SELECT id, events, product_ids, created_at FROM webhook_endpoints WHERE active ORDER BY id`,
      [],
    );
    return rows.map((r) => ({ id: r.id, events: r.events, productIds: r.product_ids, createdAt: r.created_at }));
  }

  /**
   * A pending delivery per (endpoint, event) pair in one statement; the unique pair makes a repeated fan-out of an
   * event harmless. Returns how many are new.
   */
  async insertDeliveries(deliveries: { endpointId: number; eventId: string }[], manager: EntityManager): Promise<number> {
    const { rows } = await preparedQuery<{ created: number }>(
      manager,
      'webhooks-insert-deliveries',
      `WITH created AS (
         INSERT INTO webhook_deliveries (endpoint_id, event_id, next_attempt_at)
         SELECT d.endpoint_id, d.event_id, now() FROM unnest($1::int[], $2::varchar[]) AS d(endpoint_id, event_id)
         ON CONFLICT ON CONSTRAINT webhook_deliveries_endpoint_event_key DO NOTHING RETURNING id
       )
       SELECT count(*)::int AS created FROM created`,
      [deliveries.map((d) => d.endpointId), deliveries.map((d) => d.eventId)],
    );
    return rows[0]?.created ?? 0;
  }
}

const ENDPOINT_COLUMNS = 'id, url, description, events, secret, active, product_ids, created_at, updated_at';

/** A webhook_endpoints row as pg returns it. */
interface EndpointRow {
  id: number;
  url: string;
  description: string | null;
  events: string[];
  secret: string;
  active: boolean;
  product_ids: number[] | null;
  created_at: Date;
  updated_at: Date;
}

function endpointFromRow(r: EndpointRow): WebhookEndpoint {
  return Object.assign(new WebhookEndpoint(), {
    id: r.id,
    url: r.url,
    description: r.description,
    events: r.events,
    secret: r.secret,
    active: r.active,
    productIds: r.product_ids,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  });
}

/** A delivery with its event's type. */
export type DeliveryWithType = WebhookDelivery & { eventType: string };

const DELIVERY_COLUMNS = `d.id, d.endpoint_id, d.event_id, d.status, d.attempts, d.last_status_code, d.last_error, d.next_attempt_at,
  d.created_at, d.delivered_at, ev.type AS event_type`;

/** A webhook_deliveries row (bigint id as text) with its event's type. */
interface DeliveryRow {
  id: string;
  endpoint_id: number;
  event_id: string;
  status: DeliveryStatus;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: Date | null;
  created_at: Date;
  delivered_at: Date | null;
  event_type: string;
}

function deliveryFromRow(r: DeliveryRow): DeliveryWithType {
  return Object.assign(new WebhookDelivery(), {
    id: String(r.id),
    endpointId: r.endpoint_id,
    eventId: r.event_id,
    status: r.status,
    attempts: r.attempts,
    lastStatusCode: r.last_status_code,
    lastError: r.last_error,
    nextAttemptAt: r.next_attempt_at,
    createdAt: r.created_at,
    deliveredAt: r.delivered_at,
    eventType: r.event_type,
  });
}
