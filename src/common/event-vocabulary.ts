/**
 * The event vocabulary (docs/architecture.md, Module boundaries): the words the event spine (src/events/) records and
 * the audit log (src/audit/) stores. Both import it from here, so the audit log depends on no part of the spine.
 */

/** The kinds of actor the audit log records (its actor_type column). */
export const ACTOR_TYPES = ['admin_api', 'dashboard', 'client', 'system', 'store', 'customer'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

/** The audit entry's actor column: longer names are cut to it when recorded. */
export const ACTOR_MAX_LENGTH = 320;

/**
 * Every kind of event (docs/webhooks.md, Event catalogue): each is an audit entry; all but the staff's own business
 * (sign-ins, staff accounts, notes about customers) are outbox events that webhooks and mail may receive.
 */
export const EVENT_TYPES = [
  'product.created',
  'product.updated',
  'license.created',
  'license.updated',
  'license.revoked',
  'license.released',
  'license.activated',
  'license.activation_denied',
  'license.deactivated',
  'license.file_issued',
  'license.relay_pool_issued',
  'license.relay_pool_ended',
  'license.usage_limit_reached',
  'license.usage_reset',
  'license.trial_started',
  'license.key_resent',
  'license.expiring_soon',
  'license.expired',
  'mail.retried',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
  'webhook.delivery_retried',
  'auth.login',
  'auth.login_failed',
  'auth.logout',
  'staff.invited',
  'staff.invitation_revoked',
  'staff.joined',
  'staff.role_changed',
  'staff.disabled',
  'staff.enabled',
  'staff.password_reset',
  'staff.second_factor_added',
  'staff.second_factor_reset',
  'staff.signed_in',
  'staff.sign_in_failed',
  'signing_key.rotated',
  'signing_key.revoked',
  'signing_key.endorsed',
  'token.created',
  'token.revoked',
  'store_plan.created',
  'store_plan.updated',
  'store_plan.deleted',
  'customer.note_added',
  'release.created',
  'release.artifact_uploaded',
  'release.published',
  'release.yanked',
  'release.deleted',
] as const;
/** What the audit log records: every event type but the notices. */
export type AuditAction = (typeof EVENT_TYPES)[number];

/** Events told to webhooks only, about no change: a store event a seller must act on (docs/webhooks.md, Event catalogue). */
export const NOTICE_EVENTS = ['store_event.needs_attention'] as const;
export type EventType = AuditAction | (typeof NOTICE_EVENTS)[number];
export const isNotice = (type: string) => (NOTICE_EVENTS as readonly string[]).includes(type);

/** Staff-only: sign-ins, staff accounts and notes about customers stay in the audit log, never reach a webhook or mail. */
export const isStaffOnly = (type: string) => type.startsWith('auth.') || type.startsWith('staff.') || type === 'customer.note_added';

/** Every event type a webhook endpoint may receive (and the fan-out's consumers see). */
export const OUTBOX_EVENT_TYPES: readonly EventType[] = [...EVENT_TYPES.filter((type) => !isStaffOnly(type)), ...NOTICE_EVENTS];
