import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { plain, rowShape, type RowOf } from '../database/row-shape';
import { raw, runStatement, sql } from '../database/statement';
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

/** A claimed attempt's row: the delivery's, its endpoint's and its event's columns; its bigint id as text. */
const CLAIMED_ROWS = rowShape(
  plain<ClaimedDelivery>(),
  'id, attempts, endpoint_id, url, stored_secret, endpoint_active, event_id, event_type, event_created_at, payload',
  {
    convert: { id: (id: string) => String(id) },
    expressions: {
      url: 'e.url',
      stored_secret: 'e.secret',
      endpoint_active: 'e.active',
      event_type: 'ev.type',
      event_created_at: 'ev.created_at',
      payload: 'ev.payload',
    },
  },
);

/** An attempt's outcome as recorded. */
export interface AttemptOutcome {
  status: DeliveryStatus;
  statusCode: number | null;
  error: string | null;
  nextAttemptInSeconds: number | null;
}

/** A claimed attempt `attempt` of delivery `deliveryId` and its outcome, for finishAttempts. */
export interface FinishedAttempt extends AttemptOutcome {
  deliveryId: string;
  attempt: number;
}

/**
 * A claimed attempt holds its delivery this long; a crashed sender's attempt is taken up again after it. Longer than
 * the longest attempt (DNS bounded to 5 s, the request to 10 s, then its outcome's write), so no two sends of it overlap.
 */
export const ATTEMPT_LEASE_SECONDS = 30;

/**
 * The webhooks module's tables (webhook_endpoints, webhook_deliveries). A delivery sends its event's body from the
 * spine's outbox (event_outbox), which keeps the events a delivery refers to. Style: named SQL with typed rows, read
 * through their row shapes (docs/architecture.md, Database style).
 */
@Injectable()
export class WebhooksRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async listEndpoints(): Promise<WebhookEndpoint[]> {
    const rows = await runStatement<EndpointRow>(
      this.dataSource.manager,
      'webhooks-list-endpoints',
      sql`SELECT ${raw(ENDPOINT_COLUMNS)} FROM webhook_endpoints ORDER BY id`,
    );
    return rows.map(ENDPOINT_ROWS.fromRow);
  }

  /** Within a transaction (`manager`), the endpoint row is locked (FOR UPDATE). */
  async getEndpoint(id: number, manager?: EntityManager): Promise<WebhookEndpoint | null> {
    const rows = manager
      ? await runStatement<EndpointRow>(
          manager,
          'webhooks-get-endpoint-locked',
          sql`SELECT ${raw(ENDPOINT_COLUMNS)} FROM webhook_endpoints WHERE id = ${id} FOR UPDATE`,
        )
      : await runStatement<EndpointRow>(
          this.dataSource.manager,
          'webhooks-get-endpoint',
          sql`SELECT ${raw(ENDPOINT_COLUMNS)} FROM webhook_endpoints WHERE id = ${id}`,
        );
    return rows.length ? ENDPOINT_ROWS.fromRow(rows[0]) : null;
  }

  async insertEndpoint(
    endpoint: Pick<WebhookEndpoint, 'url' | 'events' | 'description' | 'active' | 'secret' | 'productIds'>,
    manager: EntityManager,
  ): Promise<WebhookEndpoint> {
    const rows = await runStatement<EndpointRow>(
      manager,
      'webhooks-insert-endpoint',
      sql`INSERT INTO webhook_endpoints (url, events, description, active, secret, product_ids)
          VALUES (${endpoint.url}, ${endpoint.events}::text[], ${endpoint.description}, ${endpoint.active}, ${endpoint.secret},
            ${endpoint.productIds}::int[])
          RETURNING ${raw(ENDPOINT_COLUMNS)}`,
    );
    return ENDPOINT_ROWS.fromRow(rows[0]);
  }

  /** Writes the changeable columns of a locked endpoint (url, events, description, active, secret, updated_at). */
  async updateEndpoint(endpoint: WebhookEndpoint, manager: EntityManager): Promise<WebhookEndpoint> {
    const rows = await runStatement<EndpointRow>(
      manager,
      'webhooks-update-endpoint',
      sql`UPDATE webhook_endpoints SET url = ${endpoint.url}, events = ${endpoint.events}::text[], description = ${endpoint.description},
            active = ${endpoint.active}, secret = ${endpoint.secret}, updated_at = ${endpoint.updatedAt}
          WHERE id = ${endpoint.id} RETURNING ${raw(ENDPOINT_COLUMNS)}`,
    );
    return ENDPOINT_ROWS.fromRow(rows[0]);
  }

  async deleteEndpoint(id: number, manager: EntityManager): Promise<void> {
    await runStatement(manager, 'webhooks-delete-endpoint', sql`DELETE FROM webhook_endpoints WHERE id = ${id}`);
  }

  /** Stores an endpoint's sealed secret (webhook-secrets.ts). */
  async setSecret(id: number, sealed: string, manager: EntityManager): Promise<void> {
    await runStatement(manager, 'webhooks-set-secret', sql`UPDATE webhook_endpoints SET secret = ${sealed} WHERE id = ${id}`);
  }

  /** Endpoints whose secret is still the plain text an earlier version stored. */
  plainSecrets(prefix: string): Promise<{ id: number; secret: string }[]> {
    return runStatement<{ id: number; secret: string }>(
      this.dataSource.manager,
      'webhooks-plain-secrets',
      sql`SELECT id, secret FROM webhook_endpoints WHERE starts_with(secret, ${prefix}) ORDER BY id`,
    );
  }

  /** Replaces a plain secret with its sealed form unless someone changed it meanwhile (a rotation, another instance). */
  async replacePlainSecret(id: number, plain: string, sealed: string): Promise<boolean> {
    const rows = await runStatement<{ id: number }>(
      this.dataSource.manager,
      'webhooks-replace-plain-secret',
      sql`UPDATE webhook_endpoints SET secret = ${sealed} WHERE id = ${id} AND secret = ${plain} RETURNING id`,
    );
    return rows.length > 0;
  }

  /** Claims the oldest due attempt of any pending delivery that no one else is claiming right now (SKIP LOCKED). */
  async claimNextDue(): Promise<ClaimedDelivery | null> {
    return (await this.claimDue(1))[0] ?? null;
  }

  /**
   * Claims up to `limit` due attempts, oldest first, in one statement (SKIP LOCKED: two workers or instances never
   * claim the same one). Each claim is a lease: unfinished when it ends, the attempt is due again. `busy` is how many
   * attempts of each endpoint the caller has in flight: no endpoint gets more than `perEndpoint` in all.
   */
  async claimDue(limit: number, perEndpoint = limit, busy: ReadonlyMap<number, number> = new Map()): Promise<ClaimedDelivery[]> {
    const full = [...busy].filter(([, n]) => n >= perEndpoint).map(([id]) => id);
    const rows = await runStatement<RowOf<typeof CLAIMED_ROWS>>(
      this.dataSource.manager,
      'webhook-deliveries-claim',
      sql`WITH candidates AS (
            SELECT id, endpoint_id, created_at FROM webhook_deliveries
            WHERE status = 'pending' AND next_attempt_at <= now() AND endpoint_id <> ALL(${full}::int[])
            ORDER BY created_at LIMIT ${limit} FOR UPDATE SKIP LOCKED),
          due AS (
            SELECT c.id FROM (
              SELECT c.id, row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.created_at, c.id) + coalesce(b.n, 0) AS slot
              FROM candidates c LEFT JOIN unnest(${[...busy.keys()]}::int[], ${[...busy.values()]}::int[]) AS b(endpoint_id, n)
                ON b.endpoint_id = c.endpoint_id) c
            WHERE c.slot <= ${perEndpoint}),
          claimed AS (
            UPDATE webhook_deliveries d SET attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => ${ATTEMPT_LEASE_SECONDS})
            FROM due WHERE d.id = due.id
            RETURNING d.id, d.attempts, d.endpoint_id, d.event_id, d.created_at)
          SELECT ${raw(CLAIMED_ROWS.columnsOf('c'))}
          FROM claimed c JOIN webhook_endpoints e ON e.id = c.endpoint_id JOIN event_outbox ev ON ev.id = c.event_id
          ORDER BY c.created_at, c.id`,
    );
    return rows.map(CLAIMED_ROWS.fromRow);
  }

  /**
   * Records the outcome of the claimed attempt `attempt`; false (nothing written) when the delivery moved on without
   * it (its lease ran out and another worker claimed a later attempt), so a late finisher never overwrites that one.
   */
  async finishAttempt(
    deliveryId: string,
    attempt: number,
    outcome: AttemptOutcome,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<boolean> {
    return (await this.finishAttempts([{ deliveryId, attempt, ...outcome }], manager)).length > 0;
  }

  /** finishAttempt for many attempts in one statement; returns the ids of the deliveries it wrote. */
  async finishAttempts(finished: readonly FinishedAttempt[], manager: EntityManager = this.dataSource.manager): Promise<string[]> {
    if (finished.length === 0) return [];
    const rows = await runStatement<{ id: string }>(
      manager,
      'webhook-deliveries-finish',
      sql`UPDATE webhook_deliveries d SET status = f.status, last_status_code = f.status_code, last_error = f.error,
            next_attempt_at = CASE WHEN f.next_in IS NULL THEN NULL ELSE now() + make_interval(secs => f.next_in) END,
            delivered_at = CASE WHEN f.status = 'delivered' THEN now() ELSE d.delivered_at END
          FROM unnest(${finished.map((f) => f.deliveryId)}::bigint[], ${finished.map((f) => f.attempt)}::int[],
              ${finished.map((f) => f.status)}::varchar[], ${finished.map((f) => f.statusCode)}::int[],
              ${finished.map((f) => f.error?.slice(0, 500) ?? null)}::varchar[], ${finished.map((f) => f.nextAttemptInSeconds)}::int[])
            AS f(id, attempt, status, status_code, error, next_in)
          WHERE d.id = f.id AND d.attempts = f.attempt AND d.status = 'pending'
          RETURNING d.id`,
    );
    return rows.map((r) => String(r.id));
  }

  /** A failed delivery goes back to pending, due now; false when it is not failed. */
  async reopenFailed(deliveryId: string, manager: EntityManager): Promise<boolean> {
    const rows = await runStatement<{ id: string }>(
      manager,
      'webhooks-reopen-failed',
      sql`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now() WHERE id = ${deliveryId} AND status = 'failed' RETURNING id`,
    );
    return rows.length > 0;
  }

  /** A delivery and its event's type, or null. */
  async getDelivery(id: string, manager?: EntityManager): Promise<DeliveryWithType | null> {
    const rows = await runStatement<DeliveryRow>(
      manager ?? this.dataSource.manager,
      'webhooks-get-delivery',
      sql`SELECT ${raw(DELIVERY_COLUMNS)} FROM webhook_deliveries d JOIN event_outbox ev ON ev.id = d.event_id WHERE d.id = ${id}`,
    );
    return rows.length ? DELIVERY_ROWS.fromRow(rows[0]) : null;
  }

  /** One page of an endpoint's deliveries, newest first, and how many it has. */
  async listDeliveries(endpointId: number, limit: number, offset: number): Promise<{ rows: DeliveryWithType[]; total: number }> {
    const [rows, [{ total }]] = await Promise.all([
      runStatement<DeliveryRow>(
        this.dataSource.manager,
        'webhooks-list-deliveries',
        sql`SELECT ${raw(DELIVERY_COLUMNS)} FROM webhook_deliveries d JOIN event_outbox ev ON ev.id = d.event_id
            WHERE d.endpoint_id = ${endpointId} ORDER BY d.id DESC LIMIT ${limit} OFFSET ${offset}`,
      ),
      runStatement<{ total: number }>(
        this.dataSource.manager,
        'webhooks-count-deliveries',
        sql`SELECT count(*)::int AS total FROM webhook_deliveries WHERE endpoint_id = ${endpointId}`,
      ),
    ]);
    return { rows: rows.map(DELIVERY_ROWS.fromRow), total };
  }

  /** Queue depth and the age of the oldest pending delivery, for the metrics. */
  async pendingSummary(): Promise<{ pending: number; oldestSeconds: number }> {
    const [row] = await runStatement<{ pending: number; oldest: number | null }>(
      this.dataSource.manager,
      'webhooks-pending-summary',
      sql`SELECT count(*)::int AS pending, extract(epoch FROM now() - min(created_at))::float8 AS oldest
          FROM webhook_deliveries WHERE status = 'pending'`,
    );
    return { pending: row.pending, oldestSeconds: row.oldest ?? 0 };
  }

  /** The active endpoints, as the fan-out chooses among them. */
  async activeEndpoints(manager: EntityManager): Promise<FanoutEndpoint[]> {
    const rows = await runStatement<{ id: number; events: string[]; product_ids: number[] | null; created_at: Date }>(
      manager,
      'webhooks-active-endpoints',
      sql`SELECT id, events, product_ids, created_at FROM webhook_endpoints WHERE active ORDER BY id`,
    );
    return rows.map((r) => ({ id: r.id, events: r.events, productIds: r.product_ids, createdAt: r.created_at }));
  }

  /**
   * A pending delivery per (endpoint, event) pair in one statement; the unique pair makes a repeated fan-out of an
   * event harmless. Returns how many are new.
   */
  async insertDeliveries(deliveries: { endpointId: number; eventId: string }[], manager: EntityManager): Promise<number> {
    const rows = await runStatement<{ created: number }>(
      manager,
      'webhooks-insert-deliveries',
      sql`WITH created AS (
            INSERT INTO webhook_deliveries (endpoint_id, event_id, next_attempt_at)
            SELECT d.endpoint_id, d.event_id, now()
            FROM unnest(${deliveries.map((d) => d.endpointId)}::int[], ${deliveries.map((d) => d.eventId)}::varchar[]) AS d(endpoint_id, event_id)
            ON CONFLICT ON CONSTRAINT webhook_deliveries_endpoint_event_key DO NOTHING RETURNING id)
          SELECT count(*)::int AS created FROM created`,
    );
    return rows[0]?.created ?? 0;
  }
}

/** A webhook_endpoints row read into a WebhookEndpoint. */
const ENDPOINT_ROWS = rowShape(
  () => new WebhookEndpoint(),
  'id, url, description, events, secret, active, product_ids, created_at, updated_at',
);

const ENDPOINT_COLUMNS = ENDPOINT_ROWS.columns;

type EndpointRow = RowOf<typeof ENDPOINT_ROWS>;

/** A delivery with its event's type. */
export type DeliveryWithType = WebhookDelivery & { eventType: string };

/** A webhook_deliveries row (bigint id as text) with its event's type. */
const DELIVERY_ROWS = rowShape(
  () => new WebhookDelivery() as DeliveryWithType,
  'id, endpoint_id, event_id, status, attempts, last_status_code, last_error, next_attempt_at, created_at, delivered_at, event_type',
  { convert: { id: (id: string) => String(id) }, expressions: { event_type: 'ev.type' } },
);

const DELIVERY_COLUMNS = DELIVERY_ROWS.columnsOf('d');

type DeliveryRow = RowOf<typeof DELIVERY_ROWS>;
