import { OUTBOX_EVENT_TYPES } from '../audit/event-recorder';

/** docs/webhooks.md, Event catalogue: every audit action except auth.* and staff notes, plus the time-driven events. `*` subscribes to all of them. */
export const WEBHOOK_EVENT_TYPES: readonly string[] = OUTBOX_EVENT_TYPES;
export const ALL_EVENTS = '*';
