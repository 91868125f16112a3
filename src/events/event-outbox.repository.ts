import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { runStatement, sql } from '../database/statement';
import type { PendingEvent } from './event-consumer';

/**
 * The events outbox (event_outbox) as the fan-out reads and settles it (docs/webhooks.md, The event spine). Style:
 * named SQL with typed rows (docs/architecture.md, Database style). The recorder writes it.
 */
@Injectable()
export class EventOutboxRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The idle poll's only statement: an index-only look at the pending events' partial index. */
  async anyPending(): Promise<boolean> {
    const [row] = await runStatement<{ pending: boolean }>(
      this.dataSource.manager,
      'events-any-pending',
      sql`SELECT EXISTS (SELECT 1 FROM event_outbox WHERE fanned_out_at IS NULL) AS pending`,
    );
    return row?.pending === true;
  }

  /** Up to `limit` pending events, oldest first, locked; those another fan-out holds are skipped, not waited for. */
  async claimPending(limit: number, manager: EntityManager): Promise<PendingEvent[]> {
    const rows = await runStatement<{
      id: string;
      type: string;
      product_id: number | null;
      created_at: Date;
      payload: PendingEvent['payload'];
    }>(
      manager,
      'events-claim-pending',
      sql`SELECT id, type, product_id, created_at, payload FROM event_outbox WHERE fanned_out_at IS NULL
          ORDER BY created_at LIMIT ${limit} FOR UPDATE SKIP LOCKED`,
    );
    return rows.map((r) => ({ id: r.id, type: r.type, productId: r.product_id, createdAt: r.created_at, payload: r.payload }));
  }

  /** One statement settles a pass: `kept` events (a consumer refers to them) marked fanned out, the others deleted. */
  async settle(kept: string[], dropped: string[], manager: EntityManager): Promise<void> {
    await runStatement(
      manager,
      'events-settle',
      sql`WITH kept AS (UPDATE event_outbox SET fanned_out_at = now() WHERE id = ANY(${kept}::varchar[]))
          DELETE FROM event_outbox WHERE id = ANY(${dropped}::varchar[])`,
    );
  }
}
