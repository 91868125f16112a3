import type { MailKind } from '../config/app-config';
import type { PendingEvent } from '../webhooks/event-fanout.service';

/** A message the fan-out writes to the mail outbox. */
export interface NewMail {
  kind: MailKind;
  dedupeKey: string;
  /** The event it was derived from; null for a portal sign-in link, which is no event (docs/portal.md, Signing in). */
  eventId: string | null;
  licenseId: number | null;
  productId: number | null;
  toAddress: string;
  toName: string | null;
  data: Record<string, unknown>;
  /** `failed` at once for an address no server could take (a line break, no @): never sent, shown to staff. */
  status: 'pending' | 'failed';
  lastError: string | null;
}

type LicenseData = {
  id?: number;
  license_key?: string;
  customer_name?: string;
  customer_email?: string | null;
  expires_at?: string | null;
  license_type?: string;
  product?: { code?: string; name?: string };
  /** The store integration's hook (docs/mail.md, Stores): an active subscription renews, so no reminder. */
  store?: { name?: string; subscription_active?: boolean };
  event?: { actor_type?: string; details?: Record<string, unknown> };
};

/** One mailbox, nothing else: no spaces, line breaks, brackets or second @ (docs/mail.md, Headers). */
const ADDRESS = /^[^\s\p{Cc}<>()[\]\\,;:"@]+@[^\s\p{Cc}<>()[\]\\,;:"@]+$/u;

export const validRecipient = (address: string) => address.length <= 254 && ADDRESS.test(address);

/** The mail kind an event asks for, or null (docs/mail.md, When mail is sent). */
export function mailKindOf(type: string, data: LicenseData): MailKind | null {
  const actorType = data.event?.actor_type;
  switch (type) {
    case 'license.created':
      // Store-made licences always mail the key; staff ask for it with notify_customer.
      return data.event?.details?.notify_customer === true || actorType === 'store' ? 'license_issued' : null;
    case 'license.key_resent':
      // Staff asked for the key again: one message per request (the event's id).
      return 'license_issued';
    case 'license.expiring_soon':
      return data.store?.subscription_active === true ? null : 'expiring_soon';
    case 'license.expired':
      return data.store?.subscription_active === true ? null : 'expired';
    case 'license.released':
      // Staff and the heartbeat sweep release seats behind the customer's back; a customer releasing their own is told on screen.
      return actorType === 'customer' ? null : 'seat_released';
    default:
      return null;
  }
}

/** The outbox rows for a batch of events: at most one per event, reminders once per licence and expiry date. */
export function mailFromEvents(events: PendingEvent[], disabled: readonly MailKind[]): NewMail[] {
  const mails: NewMail[] = [];
  for (const event of events) {
    const data = (event.payload?.data ?? {}) as LicenseData;
    const kind = mailKindOf(event.type, data);
    if (!kind || disabled.includes(kind)) continue;
    const address = typeof data.customer_email === 'string' ? data.customer_email.trim() : '';
    if (!address) continue;
    const reminder = kind === 'expiring_soon' || kind === 'expired';
    const valid = validRecipient(address);
    mails.push({
      kind,
      dedupeKey: reminder ? `${kind}:${data.id}:${data.expires_at ?? 'never'}` : `${kind}:${event.id}`,
      eventId: event.id,
      licenseId: typeof data.id === 'number' ? data.id : null,
      productId: event.productId,
      toAddress: address.slice(0, 254),
      toName: data.customer_name?.slice(0, 200) ?? null,
      data: {
        license_key: data.license_key,
        customer_name: data.customer_name,
        license_type: data.license_type,
        expires_at: data.expires_at ?? null,
        product: { code: data.product?.code, name: data.product?.name },
        // Which store's customer portal the key mail links to (docs/mail.md, Links in the key mail).
        ...(kind === 'license_issued' && typeof data.store?.name === 'string' ? { store_name: data.store.name } : {}),
        ...(kind === 'seat_released'
          ? { released: data.event?.details?.released ?? null, reason: data.event?.details?.reason ?? null }
          : {}),
      },
      status: valid ? 'pending' : 'failed',
      lastError: valid ? null : 'invalid recipient address: not sent',
    });
  }
  return mails;
}
