import { invalidSignature } from '../store-signature';

/** A Stripe-Signature timestamp: plain ASCII digits, nothing else (no sign, no fraction, no suffix). */
const PLAIN_DIGITS = /^[0-9]{1,12}$/;

/**
 * The one `t=` timestamp of a Stripe-Signature header (`t=...,v1=...`), in Unix seconds. A header with no `t=`, more
 * than one, or one that is not plain digits is refused here, before the future-timestamp check and before the SDK
 * parses it: the SDK would read the first of two and `Number()` would read `+N` or `N.0` (docs/stores.md,
 * Signatures).
 */
export function stripeSignatureTimestamp(header: string): number {
  const timestamps = header
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.startsWith('t='))
    .map((part) => part.slice(2));
  if (timestamps.length === 0) throw invalidSignature('The Stripe-Signature header has no t= timestamp');
  if (timestamps.length > 1) throw invalidSignature('The Stripe-Signature header has more than one t= timestamp');
  const [timestamp] = timestamps;
  if (!PLAIN_DIGITS.test(timestamp)) throw invalidSignature('The Stripe-Signature t= timestamp is not plain digits (Unix seconds)');
  return Number(timestamp);
}
