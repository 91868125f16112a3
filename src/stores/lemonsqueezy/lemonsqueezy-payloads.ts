/**
 * Lemon Squeezy webhook payloads, written from its documented webhook requests and object pages: its SDK
 * (@lemonsqueezy/lemonsqueezy.js) types API responses only, not webhook bodies (docs/stores.md, Connect Lemon Squeezy).
 * Only the fields this server reads; a webhook body is `{meta, data}` where data is the JSON:API object.
 */
export interface LemonSqueezyWebhook<A = Record<string, unknown>> {
  meta: {
    event_name: string;
    test_mode?: boolean;
    webhook_id?: string;
    custom_data?: Record<string, unknown>;
  };
  data: { type: string; id: string; attributes: A };
}

/** An order (`order_created`, `order_refunded`). */
export interface LemonSqueezyOrder {
  store_id: number;
  customer_id: number;
  identifier: string;
  order_number: number;
  user_name: string;
  user_email: string;
  status: 'pending' | 'failed' | 'paid' | 'refunded' | 'partial_refund';
  refunded: boolean;
  refunded_at: string | null;
  first_order_item: { id: number; order_id: number; product_id: number; variant_id: number; price_id?: number; quantity: number };
  test_mode: boolean;
  created_at: string;
  updated_at: string;
}

/** A subscription (`subscription_created`, `subscription_updated`, `subscription_expired`, ...). */
export interface LemonSqueezySubscription {
  store_id: number;
  customer_id: number;
  order_id: number;
  order_item_id: number;
  product_id: number;
  variant_id: number;
  user_name: string;
  user_email: string;
  status: 'on_trial' | 'active' | 'paused' | 'past_due' | 'unpaid' | 'cancelled' | 'expired';
  cancelled: boolean;
  renews_at: string | null;
  ends_at: string | null;
  first_subscription_item?: { id: number; subscription_id: number; price_id: number; quantity: number } | null;
  test_mode: boolean;
  created_at: string;
  updated_at: string;
}

/** A subscription invoice (`subscription_payment_success`, `subscription_payment_refunded`, ...). */
export interface LemonSqueezySubscriptionInvoice {
  store_id: number;
  subscription_id: number;
  customer_id: number;
  user_name: string;
  user_email: string;
  billing_reason: 'initial' | 'renewal' | 'updated';
  status: 'pending' | 'paid' | 'void' | 'refunded' | 'partial_refund';
  refunded: boolean;
  test_mode: boolean;
  created_at: string;
  updated_at: string;
}
