import { AUDIT_ACTIONS } from '../audit/audit-entry.entity';

/** The time-driven events: sent once per licence and expiry date by the expiry scan. */
export const TIME_DRIVEN_EVENTS = ['license.expiring_soon', 'license.expired'] as const;

/** CONTRACT 11: every audit action except auth.*, plus the time-driven events. `*` subscribes to all of them. */
export const WEBHOOK_EVENT_TYPES: readonly string[] = [...AUDIT_ACTIONS.filter((a) => !a.startsWith('auth.')), ...TIME_DRIVEN_EVENTS];
export const ALL_EVENTS = '*';

export const isWebhookEvent = (type: string) => WEBHOOK_EVENT_TYPES.includes(type);
