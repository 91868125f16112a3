import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import type { Actor } from '../common/auth/actor';
import { raw, runStatement, type Sql, sql } from '../database/statement';
import { ACTOR_MAX_LENGTH, type EventType, isNotice, isStaffOnly } from '../common/event-vocabulary';

export type { EventType } from '../common/event-vocabulary';

/** What happened, told by the use case that made it happen (docs/webhooks.md, The event spine). */
export interface DomainEvent {
  type: EventType;
  actor: Actor;
  licenseId?: number | null;
  /** The product the event concerns (what webhook endpoints limited to products filter on); null for token.*, signing_key.*, webhook.*. */
  productId?: number | null;
  productCode?: string | null;
  details?: Record<string, unknown>;
  /** The licence as the admin GET shows it after the change, captured by the use case from what it already holds. */
  license?: object;
}

/** A change to commit in the same statement as its events: WITH-list entries, the last named `change` (its rows are returned). */
export interface RecordedChange {
  /** Names the prepared statement: one name per distinct text. */
  name: string;
  ctes: Sql;
  /**
   * A condition over the `change` rows: the events are written only when a row meets it, in the same statement, so a
   * change that decides whether it is news (the increment that reaches a cap) needs no second step.
   */
  eventsOnlyIf?: Sql;
}

/** The webhook-id of an event: unique per event, the same on every delivery and retry. */
const newEventId = () => `msg_${randomBytes(16).toString('hex')}`;

/** The audit entries and outbox rows of a statement, as unnest() over one array per column; `guard` makes them conditional. */
function eventCtes(all: DomainEvent[], now: Date, guard: Sql): Sql {
  const events = all.filter((e) => !isNotice(e.type));
  const outboxed = all.filter((e) => !isStaffOnly(e.type));
  return sql`audit AS (
    INSERT INTO audit_entries (action, actor_type, actor, ip, license_id, product_code, details)
    SELECT * FROM unnest(${events.map((e) => e.type)}::varchar[], ${events.map((e) => e.actor.type)}::varchar[],
      ${events.map((e) => e.actor.name?.slice(0, ACTOR_MAX_LENGTH) ?? null)}::varchar[], ${events.map((e) => e.actor.ip?.slice(0, 45) ?? null)}::varchar[],
      ${events.map((e) => e.licenseId ?? null)}::int[], ${events.map((e) => e.productCode ?? null)}::varchar[],
      ${events.map((e) => JSON.stringify(e.details ?? {}))}::jsonb[])${guard}
  ), outbox AS (
    INSERT INTO event_outbox (id, type, payload, license_id, product_id)
    SELECT * FROM unnest(${outboxed.map(() => newEventId())}::varchar[], ${outboxed.map((e) => e.type)}::varchar[],
      ${outboxed.map((e) => JSON.stringify({ type: e.type, timestamp: now.toISOString(), data: eventData(e) }))}::jsonb[],
      ${outboxed.map((e) => e.licenseId ?? null)}::int[], ${outboxed.map((e) => e.productId ?? null)}::int[])${guard}
  )`;
}

/**
 * The one way a state change is told: its audit entry and its outbox row (event_outbox, handed to the consumers after
 * commit by EventFanoutService) come from one call, in one statement on the caller's transaction. Nothing else runs:
 * no subscriber lookup, no re-read, no job. Without a manager the statement is its own transaction.
 */
@Injectable()
export class EventRecorder {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Runs `work` in one transaction, for a use case whose change and events commit together (docs/webhooks.md, The event
   * spine): it then needs the recorder alone, not the data source as well.
   */
  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  async record(manager: EntityManager | undefined, ...events: DomainEvent[]): Promise<void> {
    await this.recordWith(manager, undefined, events);
  }

  /** Writes `change` and the events in one statement (one round trip), returning the change's rows. */
  async recordWith<T extends object>(
    manager: EntityManager | undefined,
    change: RecordedChange | undefined,
    events: DomainEvent[],
  ): Promise<T[]> {
    // A change that tells nothing (a re-activation refreshing its seat) is the change alone: no empty INSERTs to run.
    if (change && events.length === 0)
      return runStatement<T>(manager ?? this.dataSource.manager, change.name, sql`WITH ${change.ctes} SELECT * FROM change`);
    const guard = change?.eventsOnlyIf ? sql`\n    WHERE EXISTS (SELECT 1 FROM change WHERE ${change.eventsOnlyIf})` : raw('');
    const written = eventCtes(events, new Date(), guard);
    const statement = change ? sql`WITH ${change.ctes}, ${written} SELECT * FROM change` : sql`WITH ${written} SELECT 1`;
    return runStatement<T>(manager ?? this.dataSource.manager, change ? `${change.name}+events` : 'events', statement);
  }
}

/** The webhook body's `data`: the licence plus who did what, or the details (and product code) plus who did what. */
export function eventData(event: DomainEvent): Record<string, unknown> {
  const context = { actor_type: event.actor.type, actor: event.actor.name, details: event.details ?? {} };
  if (event.license) return { ...event.license, event: context };
  return { ...(event.details ?? {}), ...(event.productCode ? { product_code: event.productCode } : {}), event: context };
}
