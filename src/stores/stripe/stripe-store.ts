import { Inject, Injectable } from '@nestjs/common';
import Stripe from 'stripe';
import { AppError } from '../../common/errors/app-error';
import { ErrorCode } from '../../common/errors/error-codes';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import type { ReceivedStoreEvent, StoreAction, StoreAdapter } from '../store-action';

/** The API version the pinned SDK speaks: events of another are stored failed (docs/stores.md, Connect Stripe). */
export const STRIPE_API_VERSION: string = Stripe.API_VERSION;
/** Seconds a Stripe-Signature timestamp may be old (Stripe's own default). */
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
      paymentId: storableId(paymentOf(event)),
      customerId: null,
      payload: { ...event, data: { ...event.data, object } },
    };
  }

  unsupported(event: ReceivedStoreEvent): string | undefined {
    const version = (event.payload as { api_version?: string | null }).api_version;
    if (version === STRIPE_API_VERSION) return undefined;
    return `api_version ${String(version)} differs from ${STRIPE_API_VERSION}, the version this server's Stripe SDK speaks: set the endpoint's API version to ${STRIPE_API_VERSION} in Stripe`;
  }

  async toAction(received: ReceivedStoreEvent): Promise<StoreAction> {
    const event = received.payload as unknown as Stripe.Event;
    switch (event.type) {
      case 'invoice.paid':
        return invoiceAction(event.data.object);
      case 'checkout.session.completed':
        return this.checkoutAction(event.data.object);
      case 'customer.subscription.updated': {
        const sub = event.data.object;
        // Only a change of items (price or quantity) is a plan change; a scheduled cancellation and the rest change nothing.
        const previous = event.data.previous_attributes as { items?: unknown } | undefined;
        if (!previous?.items)
          return { kind: 'ignore', reason: 'a subscription update without a change of price or quantity changes nothing' };
        const item = sub.items.data[0];
        return { kind: 'plan_change', subscriptionId: sub.id, priceId: item?.price.id ?? null, quantity: item?.quantity ?? 1 };
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
        if (!charge.refunded) return { kind: 'ignore', reason: 'a partial refund changes nothing' };
        const payment = idOf(charge.payment_intent);
        if (!payment) return { kind: 'ignore', reason: 'the charge has no payment intent' };
        return { kind: 'refund', paymentId: payment, otherPaymentId: () => this.invoiceOfPayment(payment) };
      }
      default:
        return { kind: 'ignore', reason: `${event.type} is not an event this server acts on` };
    }
  }

  /**
   * The invoice a PaymentIntent paid, read through the API (STRIPE_API_KEY): invoice.paid events of the pinned version
   * do not include the invoice's payments, so the ledger knows such a purchase or renewal by its invoice id.
   */
  private async invoiceOfPayment(paymentIntent: string): Promise<string | null> {
    if (!this.config.stores?.stripeApiKey) return null;
    const payments = await this.stripe.invoicePayments.list({
      payment: { type: 'payment_intent', payment_intent: paymentIntent },
      limit: 1,
    });
    return idOf(payments.data[0]?.invoice);
  }

  /** A one-time Checkout payment: its line items are read through the API (STRIPE_API_KEY). */
  private async checkoutAction(session: Stripe.Checkout.Session): Promise<StoreAction> {
    if (session.mode !== 'payment') return { kind: 'ignore', reason: `a ${session.mode} Checkout session: its invoice.paid acts` };
    if (!this.config.stores?.stripeApiKey) return { kind: 'fail', reason: 'STRIPE_API_KEY is unset: the line items cannot be read' };
    const items = await this.stripe.checkout.sessions.listLineItems(session.id, { limit: 100 });
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

/** The PaymentIntent that paid: a refund's charge names it. */
function paymentOf(event: Stripe.Event): string | null {
  switch (event.type) {
    case 'invoice.paid':
      // Without the payments list (an includable field, absent from events) the invoice stands for its payment.
      return idOf(event.data.object.payments?.data?.[0]?.payment?.payment_intent) ?? event.data.object.id ?? null;
    case 'checkout.session.completed':
      return idOf(event.data.object.payment_intent);
    case 'charge.refunded':
      return idOf(event.data.object.payment_intent);
    default:
      return null;
  }
}

/** invoice.paid: the first invoice of a subscription is its purchase, a cycle's is a renewal; others change nothing. */
function invoiceAction(invoice: Stripe.Invoice): StoreAction {
  const reason = invoice.billing_reason;
  if (reason !== 'subscription_create' && reason !== 'subscription_cycle')
    return { kind: 'ignore', reason: `an invoice for ${String(reason)} changes nothing` };
  const subscriptionId = idOf(invoice.parent?.subscription_details?.subscription);
  if (!subscriptionId) return { kind: 'ignore', reason: 'the invoice belongs to no subscription' };
  // The plan: the first line whose price has one; lines carry their price under pricing.price_details.
  const lines = invoice.lines.data.map((line) => ({
    priceId: idOf(line.pricing?.price_details?.price),
    quantity: line.quantity ?? 1,
    period: line.period,
  }));
  const period = lines[0]?.period;
  return {
    kind: reason === 'subscription_create' ? 'purchase' : 'renewal',
    buyer: {
      name: invoice.customer_name ?? invoice.customer_email ?? 'Stripe customer',
      email: invoice.customer_email,
      customerId: idOf(invoice.customer),
    },
    subscriptionId,
    orderId: invoice.id,
    lines: lines.map(({ priceId, quantity }) => ({ priceId, quantity })),
    periodStart: time(period?.start),
    periodEnd: time(period?.end),
  };
}
