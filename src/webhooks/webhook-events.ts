import { OUTBOX_EVENT_TYPES } from '../common/event-vocabulary';

/** docs/webhooks.md, Event catalogue: every event except the staff's own (auth.*, staff.*, notes). `*` subscribes to all of them. */
export const WEBHOOK_EVENT_TYPES: readonly string[] = OUTBOX_EVENT_TYPES;
export const ALL_EVENTS = '*';
