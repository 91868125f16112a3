import { Inject, Injectable } from '@nestjs/common';
import Stripe from 'stripe';
import { AppError } from '../../common/errors/app-error';
import { ErrorCode } from '../../common/errors/error-codes';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { stripeSignatureTimestamp } from './stripe-signature-header';
import type { ReceivedStoreEvent, StoreAction, StoreAdapter, StoreAsk, StorePayment } from '../store-action';

/** The API version the pinned SDK speaks (docs/stores.md, Stripe API versions). */
export const STRIPE_API_VERSION: string = Stripe.API_VERSION;
/**
 * The version the previous release pinned (stripe 22.x): its events are accepted too, so an endpoint can be moved to
 * the new version after the server is upgraded (docs/stores.md, Stripe API versions). Events of any other
 * version are stored failed.
 */
export const STRIPE_PREVIOUS_API_VERSION = '2026-08-26.dahlia';
export const STRIPE_ACCEPTED_API_VERSIONS: readonly string[] = [STRIPE_API_VERSION, STRIPE_PREVIOUS_API_VERSION];
/** Seconds a Stripe-Signature timestamp may be away from now, either way (the SDK checks only the past). */
const TOLERANCE_SECONDS = 300;

/** Unix seconds as a Date; null for anything else, or a time PostgreSQL cannot store. */
const time = (seconds: number | null | undefined) =>
  typeof seconds === 'number' && Number.isFinite(seconds) && Math.abs(seconds) < 1e11 ? new Date(seconds * 1000) : null;
/** A store id we can keep (the ledger's columns hold 255 characters); anything else is no id. */
const storableId = (id: unknown) => (typeof id === 'string' && id.length <= 255 ? id : null);
const idOf = (value: string | { id: string } | null | undefined) => (typeof value === 'string' ? value : (value?.id ?? null));

/** Stripe through its official SDK: signatures, the pinned API version's field paths, Checkout line items. */
@Injectable()
export class StripeStore implements StoreAdapter {
  private readonly stripe: Stripe;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    const host = config.stores?.stripeApiHost;
    this.stripe = new Stripe(config.stores?.stripeApiKey ?? 'sk_unset', {
      apiVersion: STRIPE_API_VERSION as Stripe.LatestApiVersion,
      maxNetworkRetries: 1,
      timeout: 10_000,
      ...(host ?? {}),
    });
  }

  readonly purchaseNeedsEmail = false;

  get connected(): boolean {
    return Boolean(this.config.stores?.stripeWebhookSecret);
  }

  isLive(payload: Record<string, unknown>): boolean {
    return payload.livemode === true;
  }

  verify(raw: Buffer, signature: string | undefined): ReceivedStoreEvent {
    if (!signature) throw new AppError(ErrorCode.INVALID_SIGNATURE, 400, 'The Stripe-Signature header is missing');
    // The SDK refuses old timestamps only: one dated ahead would make a captured signature replayable for longer.
    // One plain-digit t= or 400 first: the SDK reads the first of two, and Number() reads `+N` or `N.0`.
    const timestamp = stripeSignatureTimestamp(signature);
    if (timestamp - Date.now() / 1000 > TOLERANCE_SECONDS)
      throw new AppError(
        ErrorCode.INVALID_SIGNATURE,
        400,
        `The Stripe-Signature timestamp is more than ${TOLERANCE_SECONDS} s ahead of now`,
      );
    let event: Stripe.Event;
    try {
      event = this.stripe.webhooks.constructEvent(raw, signature, this.config.stores?.stripeWebhookSecret as string, TOLERANCE_SECONDS);
    } catch (err) {
      if (err instanceof Stripe.errors.StripeSignatureVerificationError)
        throw new AppError(ErrorCode.INVALID_SIGNATURE, 400, 'The Stripe-Signature does not match the body, or is too old');
      throw AppError.field('body', 'The body is not JSON');
    }
    if (!isEvent(event)) throw AppError.field('body', 'The body is not a Stripe event (id, type and data.object are required)');
    // PostgreSQL's jsonb cannot hold a NUL character: refused here rather than failing the insert.
    if (raw.includes('\\u0000')) throw AppError.field('body', 'The event contains a NUL character (\\u0000)');
    const object = event.data.object as unknown as Record<string, unknown>;
    return {
      eventId: event.id,
      type: event.type,
      occurredAt: time(event.created),
      livemode: event.livemode === true,
      subscriptionId: storableId(subscriptionOf(event)),
      ...paymentOf(event),
      customerId: null,
      payload: { ...event, data: { ...event.data, object } },
    };
  }

  unsupported(event: ReceivedStoreEvent): string | undefined {
    const version = (event.payload as { api_version?: string | null }).api_version;
    if (typeof version === 'string' && STRIPE_ACCEPTED_API_VERSIONS.includes(version)) return undefined;
    return `api_version ${String(version)} differs from ${STRIPE_API_VERSION}, the version this server's Stripe SDK speaks (and ${STRIPE_PREVIOUS_API_VERSION}, the previous one): set the endpoint's API version to ${STRIPE_API_VERSION} in Stripe`;
  }

  async toAction(received: ReceivedStoreEvent, ask: StoreAsk): Promise<StoreAction> {
    const event = received.payload as unknown as Stripe.Event;
    switch (event.type) {
      case 'invoice.paid':
        return invoiceAction(event.data.object);
      case 'checkout.session.completed':
        return this.checkoutAction(event.data.object, ask);
      case 'customer.subscription.updated': {
        const sub = event.data.object;
        // Only a change of items (price or quantity) is a plan change; a scheduled cancellation and the rest change nothing.
        const previous = event.data.previous_attributes as { items?: unknown } | undefined;
        if (!previous?.items)
          return {
            kind: 'ignore',
            code: 'UNHANDLED_TYPE',
            reason: 'a subscription update without a change of price or quantity changes nothing',
          };
        const item = sub.items?.data?.[0];
        return {
          kind: 'plan_change',
          subscriptionId: sub.id,
          priceId: item?.price?.id ?? null,
          quantity: item?.quantity ?? 1,
          // The period the store now bills: the item's own (the pinned version keeps it on the items).
          periodEnd: time(item?.current_period_end),
        };
      }
      case 'customer.subscription.deleted': {
        const sub = event.data.object;
        return {
          kind: 'end',
          subscriptionId: sub.id,
          priceId: sub.items.data[0]?.price.id ?? null,
          endedAt: time(sub.ended_at) ?? time(event.created) ?? new Date(),
        };
      }
      case 'charge.refunded': {
        const charge = event.data.object;
        if (!charge.refunded) return { kind: 'ignore', code: 'UNHANDLED_TYPE', reason: 'a partial refund changes nothing' };
        const payment = storableId(idOf(charge.payment_intent));
        if (!payment) return { kind: 'ignore', code: 'UNHANDLED_TYPE', reason: 'the charge has no payment intent' };
        return {
          kind: 'refund',
          // A PaymentIntent pays a Checkout session (an order) or an invoice.
          payments: [
            { kind: 'order', id: payment },
            { kind: 'invoice', id: payment },
          ],
          subscriptionId: null,
          lookup: {
            key: `the invoice paid by ${payment}`,
            missingKey: this.config.stores?.stripeApiKey ? undefined : 'STRIPE_API_KEY',
            call: () => this.invoiceOfPayment(payment),
          },
        };
      }
      default:
        return { kind: 'ignore', code: 'UNHANDLED_TYPE', reason: `${event.type} is not an event this server acts on` };
    }
  }

  /**
   * The invoice a PaymentIntent paid, read through the API (STRIPE_API_KEY): invoice.paid events of the pinned version
   * do not include the invoice's payments, so the ledger knows such a purchase or renewal by its invoice id.
   */
  private async invoiceOfPayment(paymentIntent: string): Promise<StorePayment | null> {
    const payments = await this.stripe.invoicePayments.list({
      payment: { type: 'payment_intent', payment_intent: paymentIntent },
      limit: 1,
    });
    const invoice = storableId(idOf(payments.data[0]?.invoice));
    return invoice ? { kind: 'invoice', id: invoice } : null;
  }

  /** A one-time Checkout payment: its line items are read through the API (STRIPE_API_KEY). */
  private async checkoutAction(session: Stripe.Checkout.Session, ask: StoreAsk): Promise<StoreAction> {
    if (session.mode !== 'payment')
      return { kind: 'ignore', code: 'UNHANDLED_TYPE', reason: `a ${session.mode} Checkout session: its invoice.paid acts` };
    if (session.payment_status === 'unpaid')
      return { kind: 'ignore', code: 'NOT_PAID', reason: 'the Checkout session is not paid yet (an asynchronous payment method)' };
    if (!this.config.stores?.stripeApiKey)
      return { kind: 'fail', code: 'STORE_API_KEY_MISSING', reason: 'STRIPE_API_KEY is unset: the line items cannot be read' };
    const items = await ask(`the line items of ${session.id}`, () =>
      this.stripe.checkout.sessions.listLineItems(session.id, { limit: 100 }),
    );
    const buyer = {
      name: session.customer_details?.name ?? session.customer_details?.email ?? 'Stripe customer',
      email: session.customer_details?.email ?? null,
      customerId: idOf(session.customer),
    };
    return {
      kind: 'purchase',
      buyer,
      subscriptionId: null,
      orderId: session.id,
      lines: items.data.map((line) => ({ priceId: line.price?.id ?? null, quantity: line.quantity ?? 1 })),
      periodStart: null,
      periodEnd: null,
    };
  }
}

function isEvent(value: unknown): value is Stripe.Event {
  const e = value as { id?: unknown; type?: unknown; data?: { object?: unknown } } | null;
  return (
    typeof e === 'object' &&
    e !== null &&
    typeof e.id === 'string' &&
    e.id.length > 0 &&
    e.id.length <= 255 &&
    typeof e.type === 'string' &&
    e.type.length <= 100 &&
    typeof e.data?.object === 'object' &&
    e.data.object !== null
  );
}

/** The subscription an event concerns, at the pinned version's paths (an invoice's under parent.subscription_details). */
function subscriptionOf(event: Stripe.Event): string | null {
  switch (event.type) {
    case 'invoice.paid':
      return idOf(event.data.object.parent?.subscription_details?.subscription);
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted':
      return event.data.object.id;
    default:
      return null;
  }
}

/** The PaymentIntent (or the invoice standing for it) that paid, with its kind: a refund's charge names the PaymentIntent. */
function paymentOf(event: Stripe.Event): Pick<ReceivedStoreEvent, 'paymentId' | 'paymentKind'> {
  const payment = (kind: StorePayment['kind'] | null, id: string | null) => {
    const paymentId = storableId(id);
    return { paymentId, paymentKind: paymentId ? kind : null };
  };
  switch (event.type) {
    case 'invoice.paid':
      // Without the payments list (an includable field, absent from events) the invoice stands for its payment.
      return payment('invoice', idOf(event.data.object.payments?.data?.[0]?.payment?.payment_intent) ?? event.data.object.id ?? null);
    case 'checkout.session.completed':
      return payment('order', idOf(event.data.object.payment_intent));
    case 'charge.refunded':
      // The refunded PaymentIntent may have paid an order or an invoice: the refund finds out which.
      return payment(null, idOf(event.data.object.payment_intent));
    default:
      return payment(null, null);
  }
}

/**
 * invoice.paid: the first invoice of a subscription is its purchase, a cycle's a renewal, and a plan change's
 * (subscription_update) applies its period like a renewal (docs/stores.md, Plan changes); others change nothing.
 */
function invoiceAction(invoice: Stripe.Invoice): StoreAction {
  const reason = invoice.billing_reason;
  if (reason !== 'subscription_create' && reason !== 'subscription_cycle' && reason !== 'subscription_update')
    return { kind: 'ignore', code: 'UNHANDLED_TYPE', reason: `an invoice for ${String(reason)} changes nothing` };
  const subscriptionId = storableId(idOf(invoice.parent?.subscription_details?.subscription));
  if (!subscriptionId) return { kind: 'ignore', code: 'UNHANDLED_TYPE', reason: 'the invoice belongs to no subscription' };
  // The plan: the first line whose price has one; lines carry their price under pricing.price_details.
  const lines = (invoice.lines?.data ?? []).map((line) => ({
    priceId: storableId(idOf(line.pricing?.price_details?.price)),
    quantity: line.quantity ?? 1,
    period: line.period,
  }));
  // A plan change's invoice also holds proration lines of the old price: the service period is the latest of the lines
  // whose price has a plan (the new price's), found with the plans; the invoice's own period_end is not it.
  const planChange = reason === 'subscription_update';
  const period = planChange ? undefined : lines[0]?.period;
  return {
    kind: reason === 'subscription_create' ? 'purchase' : 'renewal',
    buyer: {
      name: invoice.customer_name ?? invoice.customer_email ?? 'Stripe customer',
      email: invoice.customer_email,
      customerId: idOf(invoice.customer),
    },
    subscriptionId,
    orderId: invoice.id,
    lines: lines.map(({ priceId, quantity, period: linePeriod }) => ({
      priceId,
      quantity,
      periodStart: time(linePeriod?.start),
      periodEnd: time(linePeriod?.end),
    })),
    periodStart: time(period?.start),
    periodEnd: time(period?.end),
    periodOfPlanLines: planChange,
  };
}
