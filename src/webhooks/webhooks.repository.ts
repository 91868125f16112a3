import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
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

@Injectable()
export class WebhooksRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private endpoints(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(WebhookEndpoint);
  }

  private deliveries(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(WebhookDelivery);
  }

  listEndpoints(): Promise<WebhookEndpoint[]> {
    return this.endpoints().find({ order: { id: 'ASC' } });
  }

  getEndpoint(id: number, manager?: EntityManager): Promise<WebhookEndpoint | null> {
    return this.endpoints(manager).findOne({ where: { id }, ...(manager ? { lock: { mode: 'pessimistic_write' as const } } : {}) });
  }

  saveEndpoint(endpoint: Partial<WebhookEndpoint>, manager: EntityManager): Promise<WebhookEndpoint> {
    return this.endpoints(manager).save(this.endpoints(manager).create(endpoint));
  }

  async deleteEndpoint(id: number, manager: EntityManager): Promise<void> {
    await this.endpoints(manager).delete({ id });
  }

  /** Stores an endpoint's sealed secret (webhook-secrets.ts). */
  async setSecret(id: number, sealed: string, manager: EntityManager): Promise<void> {
    await this.endpoints(manager).update({ id }, { secret: sealed });
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
    return this.claim(
      `SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= now()
       ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
      [],
    );
  }

  private async claim(select: string, params: unknown[]): Promise<ClaimedDelivery | null> {
    const lease = params.length + 1;
    const rows = await this.dataSource.query<ClaimedRow[]>(
      `WITH due AS (${select}),
       claimed AS (
         UPDATE webhook_deliveries d SET attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => $${lease})
         FROM due WHERE d.id = due.id
         RETURNING d.id, d.attempts, d.endpoint_id, d.event_id)
       SELECT c.id, c.attempts, c.endpoint_id, e.url, e.secret, e.active, c.event_id, ev.type, ev.created_at AS event_created_at, ev.payload
       FROM claimed c JOIN webhook_endpoints e ON e.id = c.endpoint_id JOIN webhook_events ev ON ev.id = c.event_id`,
      [...params, ATTEMPT_LEASE_SECONDS],
    );
    const r = rows[0];
    if (!r) return null;
    return {
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
    };
  }

  /**
   * Records the outcome of the claimed attempt `attempt`; false (nothing written) when the delivery moved on without
   * it (its lease ran out and another worker claimed a later attempt), so a late finisher never overwrites that one.
   */
  async finishAttempt(
    deliveryId: string,
    attempt: number,
    outcome: { status: DeliveryStatus; statusCode: number | null; error: string | null; nextAttemptInSeconds: number | null },
    manager: EntityManager,
  ): Promise<boolean> {
    const rows = await manager.query<{ id: string }[]>(
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

  getDelivery(id: string, manager?: EntityManager): Promise<(WebhookDelivery & { event: { type: string } }) | null> {
    return this.deliveries(manager).findOne({ where: { id }, relations: { event: true } }) as Promise<
      (WebhookDelivery & { event: { type: string } }) | null
    >;
  }

  async listDeliveries(
    endpointId: number,
    limit: number,
    offset: number,
  ): Promise<{ rows: (WebhookDelivery & { eventType: string })[]; total: number }> {
    const [deliveries, total] = await this.deliveries().findAndCount({
      where: { endpointId },
      relations: { event: true },
      order: { id: 'DESC' },
      take: limit,
      skip: offset,
    });
    return { rows: deliveries.map((d) => Object.assign(d, { eventType: d.event?.type ?? '' })), total };
  }

  /** Queue depth and the age of the oldest pending delivery, for the metrics. */
  async pendingSummary(): Promise<{ pending: number; oldestSeconds: number }> {
    const [row] = await this.dataSource.query<{ pending: number; oldest: number | null }[]>(
      `SELECT count(*)::int AS pending, extract(epoch FROM now() - min(created_at))::float8 AS oldest FROM webhook_deliveries WHERE status = 'pending'`,
    );
    return { pending: row.pending, oldestSeconds: row.oldest ?? 0 };
  }

  /**
   * Marks the licences whose time-driven event is due and not sent yet (one row per licence, kind and expiry date),
   * in the caller's transaction; returns them. `expired` looks back 2 days only, so a first start does not replay
   * every expiry in history.
   */
  async claimExpiryNotices(
    expiringDays: number,
    limit: number,
    manager: EntityManager,
  ): Promise<{ licenseId: number; productId: number; kind: 'expiring_soon' | 'expired' }[]> {
    const rows = await manager.query<{ license_id: number; product_id: number; kind: 'expiring_soon' | 'expired' }[]>(
      `WITH due AS (
         SELECT id, expires_at, 'expiring_soon' AS kind FROM licenses
         WHERE NOT revoked AND active AND expires_at > now() AND expires_at <= now() + make_interval(days => $1)
         UNION ALL
         SELECT id, expires_at, 'expired' FROM licenses
         WHERE NOT revoked AND active AND expires_at + make_interval(days => grace_days) < now()
           AND expires_at + make_interval(days => grace_days) > now() - interval '2 days'
       )
       INSERT INTO webhook_expiry_notices (license_id, kind, expires_at)
       SELECT d.id, d.kind, d.expires_at FROM due d
       WHERE NOT EXISTS (SELECT 1 FROM webhook_expiry_notices n WHERE n.license_id = d.id AND n.kind = d.kind AND n.expires_at = d.expires_at)
       ORDER BY d.expires_at LIMIT $2
       ON CONFLICT DO NOTHING RETURNING license_id, (SELECT l.product_id FROM licenses l WHERE l.id = license_id) AS product_id, kind`,
      [expiringDays, limit],
    );
    return rows.map((r) => ({ licenseId: r.license_id, productId: r.product_id, kind: r.kind }));
  }
}
