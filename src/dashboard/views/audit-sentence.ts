import { shortFingerprint } from './display';

/** What the sentence needs of an audit entry as the audit log lists it (docs/dashboard.md, Audit lines). */
export interface AuditEntryLike {
  action: string;
  actor_type: string;
  actor: string | null;
  ip?: string | null;
  license_id?: number | null;
  product_code?: string | null;
  details?: Record<string, unknown> | null;
  license?: { license_key: string } | null;
}

/** Field names of licence changes as the edit form labels them (docs/dashboard.md, Audit lines). */
const FIELD_WORDS: Record<string, string> = {
  customer_name: 'customer name',
  customer_email: 'customer e-mail',
  customer_pib: 'customer PIB',
  grace_days: 'grace days',
  expires_at: 'expiry date',
  license_type: 'licence type',
  limits: 'limits',
  features: 'features',
  notes: 'notes',
  policy: 'seat policy',
  active: 'active',
  store_subscription_ended_at: 'store subscription ended',
};

/** Why the server released seats on its own (docs/licences.md, Heartbeats and dead seats). */
const REASON_WORDS: Record<string, string> = { heartbeat_timeout: 'no heartbeat within the timeout' };

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() ? value.trim() : undefined);
const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** A client-supplied name on one line and bounded, so it cannot pose as more than a host name (docs/dashboard.md, Audit lines). */
const clientText = (value: unknown): string | undefined => text(typeof value === 'string' ? value.replace(/\s+/g, ' ').slice(0, 64) : value);

/**
 * Who did it, as staff name them: the user or token; for a client event the machine by its host name from the
 * details (the client's IP is only its address), else its shortened fingerprint, always prefixed "Machine" so a
 * host named like a staff member cannot pass for one; "The server" for system events (docs/dashboard.md, Audit lines).
 */
export function auditActor(entry: AuditEntryLike): string {
  const details = entry.details ?? {};
  if (entry.actor_type === 'system') return 'The server';
  if (entry.actor_type === 'client') {
    const host = clientText(details.hostname);
    if (host) return `Machine ${host}`;
    const fingerprint = text(details.machine_fingerprint);
    return fingerprint ? `Machine ${String(shortFingerprint(fingerprint))}` : 'A client';
  }
  // A staff member's actor is staff:<username> (docs/dashboard.md, Staff and roles): the sentence names the person.
  const actor = text(entry.actor);
  return (entry.actor_type === 'dashboard' ? actor?.replace(/^staff:/, '') : actor) ?? 'Someone';
}

function licenceName(entry: AuditEntryLike): string {
  if (entry.license?.license_key) return entry.license.license_key;
  return entry.license_id ? `licence #${entry.license_id}` : 'a licence';
}

function dateOf(value: unknown): string | undefined {
  const s = text(value);
  return s && /^\d{4}-\d{2}-\d{2}/.test(s) ? s.slice(0, 10) : undefined;
}

/** license.updated in staff words: suspended, reinstated, renewed, else the changed fields (docs/dashboard.md, Audit lines). */
function licenceUpdate(details: Record<string, unknown>, licence: string): string {
  const changes = (details.changes && typeof details.changes === 'object' ? details.changes : {}) as Record<string, { to?: unknown }>;
  const fields = Object.keys(changes);
  if (details.renewed === true) {
    const until = dateOf(changes.expires_at?.to);
    return `renewed ${licence}${until ? ` until ${until}` : ''}`;
  }
  if (fields.length === 1 && fields[0] === 'active') return `${changes.active?.to === false ? 'suspended' : 'reinstated'} ${licence}`;
  const words = fields.map((f) => (f === 'active' ? (changes.active?.to === false ? 'suspended it' : 'reinstated it') : (FIELD_WORDS[f] ?? f.replace(/_/g, ' '))));
  return words.length ? `changed ${licence}: ${words.join(', ')}` : `saved ${licence} without changes`;
}

/** The verb phrase of one entry: what happened, to what (docs/dashboard.md, Audit lines). */
function predicate(entry: AuditEntryLike): string {
  const d = entry.details ?? {};
  const licence = licenceName(entry);
  const host = clientText(d.hostname);
  switch (entry.action) {
    case 'license.created':
      return `created ${licence}`;
    case 'license.updated':
      return licenceUpdate(d, licence);
    case 'license.revoked':
      return `revoked ${licence}`;
    case 'license.released': {
      const count = typeof d.released === 'number' ? d.released : 1;
      return `released ${plural(count, 'machine', 'machines')} of ${licence}`;
    }
    case 'license.activated':
      return `${d.reactivation === true ? 'activated again' : 'activated'} ${licence}`;
    case 'license.activation_denied':
      return `was refused ${licence}${text(d.code) ? ` (${text(d.code)})` : ''}`;
    case 'license.deactivated':
      return `gave back its seat of ${licence}`;
    case 'license.key_resent':
      return `sent the key of ${licence} again${text(d.to) ? ` to ${text(d.to)}` : ''}`;
    case 'mail.retried':
      return `queued the ${text(d.kind) ?? 'mail'} message #${String(d.mail_id)}${entry.license_id ? ` about ${licence}` : ''} again`;
    case 'license.file_issued':
      return entry.actor_type === 'client' ? `downloaded a licence file of ${licence}` : `issued a licence file of ${licence}${host ? ` for ${host}` : ''}`;
    case 'license.relay_pool_issued':
      return `lent ${plural(typeof d.seats === 'number' ? d.seats : 1, 'seat', 'seats')} of ${licence} to a relay until ${text(d.expires_at) ?? 'its expiry'}`;
    case 'license.relay_pool_ended':
      return `ended a relay pool of ${licence}`;
    case 'product.created':
      return `created the product ${entry.product_code ?? ''}`.trim();
    case 'product.updated':
      return `changed the product ${entry.product_code ?? ''}`.trim();
    case 'webhook.created':
      return `created the webhook endpoint ${text(d.url) ?? `#${String(d.webhook_id)}`}`;
    case 'webhook.updated': {
      const active = (d.changes as Record<string, { to?: unknown }> | undefined)?.active;
      if (active && Object.keys(d.changes as object).length === 1) return `${active.to === false ? 'deactivated' : 'activated'} webhook endpoint #${String(d.webhook_id)}`;
      return `changed webhook endpoint #${String(d.webhook_id)}`;
    }
    case 'webhook.deleted':
      return `deleted the webhook endpoint ${text(d.url) ?? `#${String(d.webhook_id)}`}`;
    case 'webhook.secret_rotated':
      return `rotated the secret of webhook endpoint #${String(d.webhook_id)}`;
    case 'webhook.delivery_retried':
      return `queued webhook delivery #${String(d.delivery_id)} again`;
    case 'auth.login':
      return 'signed in';
    case 'auth.login_failed':
      return 'failed to sign in';
    case 'auth.logout':
      return 'signed out';
    case 'staff.signed_in':
      return `signed in${text(d.method) ? ` (${text(d.method)})` : ''}`;
    case 'staff.sign_in_failed':
      return `failed to sign in${text(d.reason) ? ` (${text(d.reason)})` : ''}`;
    case 'staff.second_factor_added':
      return `added a second factor${text(d.factor) ? ` (${text(d.factor)})` : ''}${text(d.username) ? ` for ${text(d.username)}` : ''}`;
    case 'staff.second_factor_reset':
      return `reset the second factors of ${text(d.username) ?? 'an account'}`;
    case 'signing_key.rotated':
      return `rotated the signing key${text(d.key_id) ? ` (new key ${text(d.key_id)})` : ''}`;
    case 'signing_key.revoked':
      return `revoked the signing key ${text(d.key_id) ?? ''}`.trim();
    case 'signing_key.endorsed':
      return `added an endorsement of the signing key ${text(d.key_id) ?? ''} by key ${text(d.endorser_key_id) ?? ''}`.trim();
    case 'token.created':
      return `issued the admin token ${text(d.name) ?? `#${String(d.token_id)}`}`;
    case 'token.revoked':
      return `revoked the admin token ${text(d.name) ?? `#${String(d.token_id)}`}`;
    case 'store_plan.created':
    case 'store_plan.updated':
    case 'store_plan.deleted': {
      const verb = { 'store_plan.created': 'created', 'store_plan.updated': 'changed', 'store_plan.deleted': 'deleted' }[entry.action];
      return `${verb} the ${text(d.store) ?? ''} store plan for ${text(d.price_id) ?? `#${String(d.plan_id)}`}`;
    }
    case 'staff.invited':
      return `invited ${text(d.username) ?? 'a staff member'} as ${text(d.role) ?? 'staff'}`;
    case 'staff.invitation_revoked':
      return `${d.replaced === true ? 'replaced the invitation of' : 'revoked the invitation of'} ${text(d.username) ?? 'a staff member'}`;
    case 'staff.joined':
      return `joined the staff as ${text(d.role) ?? 'staff'}`;
    case 'staff.role_changed': {
      const to = (d.to ?? {}) as { role?: unknown; products?: unknown };
      const products = Array.isArray(to.products) ? ` for ${to.products.join(', ')}` : '';
      return `made ${text(d.username) ?? 'a staff member'} ${text(to.role) ?? 'staff'}${products}`;
    }
    case 'staff.disabled':
      return `disabled the staff account ${text(d.username) ?? ''}`.trim();
    case 'staff.enabled':
      return `enabled the staff account ${text(d.username) ?? ''}`.trim();
    case 'staff.password_reset':
      return `reset the password of ${text(d.username) ?? 'a staff account'}`;
    case 'customer.note_added':
      return `wrote a note about the customer ${(text(d.customer) ?? '').replace(/^(email|pib):/, '')}`.trim();
    default:
      return entry.action;
  }
}

/**
 * One audit entry as a sentence staff read ("helpdesk-ana suspended POS-… — Invoice unpaid"): the actor, what
 * happened in words, and the reason. Pure: it reads an entry, whatever wrote it (docs/dashboard.md, Audit lines).
 */
export function auditSentence(entry: AuditEntryLike): string {
  const reasonCode = text(entry.details?.reason);
  const reason = reasonCode ? (REASON_WORDS[reasonCode] ?? reasonCode) : undefined;
  return `${auditActor(entry)} ${predicate(entry)}${reason ? ` — ${reason}` : ''}`;
}
