import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import type { Actor } from '../common/auth/actor';
import { preparedQuery } from '../database/prepared-query';
import { AUDIT_ACTIONS, AUDIT_ACTOR_MAX_LENGTH, type AuditAction } from './audit-entry.entity';

/** Events no one does: found by the expiry scan, sent to webhooks, not written to the audit log (docs/webhooks.md, Event catalogue). */
export const TIME_DRIVEN_EVENTS = ['license.expiring_soon', 'license.expired'] as const;
/** Events told to webhooks only, about no licence change: a store event a seller must act on (docs/webhooks.md, Event catalogue). */
export const NOTICE_EVENTS = ['store_event.needs_attention'] as const;
export type EventType = AuditAction | (typeof TIME_DRIVEN_EVENTS)[number] | (typeof NOTICE_EVENTS)[number];

/** Staff-only entries: a note about a customer is the staff's business, never a webhook's (docs/webhooks.md, Event catalogue). */
const STAFF_ONLY_ACTIONS: readonly string[] = ['customer.note_added'];

/** Every event type a webhook endpoint may receive: every audit action except auth.* and staff notes, plus the time-driven ones. */
export const OUTBOX_EVENT_TYPES: readonly EventType[] = [
  ...AUDIT_ACTIONS.filter((a) => !a.startsWith('auth.') && !STAFF_ONLY_ACTIONS.includes(a)),
  ...TIME_DRIVEN_EVENTS,
  ...NOTICE_EVENTS,
];

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
  ctes: string;
  /** $1..$n of `ctes`. */
  params: unknown[];
  /**
   * A condition over the `change` rows (SQL, may use $1..$n): the events are written only when a row meets it, in the
   * same statement, so a change that decides whether it is news (the increment that reaches a cap) needs no second step.
   */
  eventsOnlyIf?: string;
}

/** The webhook-id of an event: unique per event, the same on every delivery and retry. */
const newEventId = () => `msg_${randomBytes(16).toString('hex')}`;
const isAuditAction = (type: EventType): type is AuditAction => (AUDIT_ACTIONS as readonly string[]).includes(type);
const isOutboxEvent = (type: EventType) => OUTBOX_EVENT_TYPES.includes(type);

/** The audit entries and outbox rows of a statement; `guard` (over the change's rows) makes them conditional. */
const eventColumns = (guard = '') => `audit AS (
    INSERT INTO audit_entries (action, actor_type, actor, ip, license_id, product_code, details)
    SELECT * FROM unnest($A1::varchar[], $A2::varchar[], $A3::varchar[], $A4::varchar[], $A5::int[], $A6::varchar[], $A7::jsonb[])${guard}
  ), outbox AS (
    INSERT INTO webhook_events (id, type, payload, license_id, product_id)
    SELECT * FROM unnest($A8::varchar[], $A9::varchar[], $A10::jsonb[], $A11::int[], $A12::int[])${guard}
  )`;

/**
 * The one way a state change is told: its audit entry and its outbox row (webhook_events, fanned out to endpoints
 * after commit by EventFanoutService) come from one call, in one statement on the caller's transaction. Nothing else
 * runs: no subscriber lookup, no re-read, no job. Without a manager the statement is its own transaction.
 */
@Injectable()
export class EventRecorder {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async record(manager: EntityManager | undefined, ...events: DomainEvent[]): Promise<void> {
    await this.recordWith(manager, undefined, events);
  }

  /** Writes `change` and the events in one statement (one round trip), returning the change's rows. */
  async recordWith<T extends object>(
    manager: EntityManager | undefined,
    change: RecordedChange | undefined,
    events: DomainEvent[],
  ): Promise<T[]> {
    const offset = change?.params.length ?? 0;
    const guard = change?.eventsOnlyIf ? `\n    WHERE EXISTS (SELECT 1 FROM change WHERE ${change.eventsOnlyIf})` : '';
    const eventSql = eventColumns(guard).replace(/\$A(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
    const sql = change ? `WITH ${change.ctes}, ${eventSql} SELECT * FROM change` : `WITH ${eventSql} SELECT 1`;
    const { rows } = await preparedQuery<T>(manager ?? this.dataSource.manager, change ? `${change.name}+events` : 'events', sql, [
      ...(change?.params ?? []),
      ...eventParams(events, new Date()),
    ]);
    return rows;
  }
}

/** The twelve arrays of the statement: audit entries (auth.* and every other audit action), then outbox rows. */
function eventParams(events: DomainEvent[], now: Date): unknown[][] {
  const audited = events.filter((e) => isAuditAction(e.type));
  const outboxed = events.filter((e) => isOutboxEvent(e.type));
  return [
    audited.map((e) => e.type),
    audited.map((e) => e.actor.type),
    audited.map((e) => e.actor.name?.slice(0, AUDIT_ACTOR_MAX_LENGTH) ?? null),
    audited.map((e) => e.actor.ip?.slice(0, 45) ?? null),
    audited.map((e) => e.licenseId ?? null),
    audited.map((e) => e.productCode ?? null),
    audited.map((e) => JSON.stringify(e.details ?? {})),
    outboxed.map(() => newEventId()),
    outboxed.map((e) => e.type),
    outboxed.map((e) => JSON.stringify({ type: e.type, timestamp: now.toISOString(), data: eventData(e) })),
    outboxed.map((e) => e.licenseId ?? null),
    outboxed.map((e) => e.productId ?? null),
  ];
}

/** The webhook body's `data`: the licence plus who did what, or the details (and product code) plus who did what. */
export function eventData(event: DomainEvent): Record<string, unknown> {
  const context = { actor_type: event.actor.type, actor: event.actor.name, details: event.details ?? {} };
  if (event.license) return { ...event.license, event: context };
  return { ...(event.details ?? {}), ...(event.productCode ? { product_code: event.productCode } : {}), event: context };
}
