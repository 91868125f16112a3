import { createHmac, timingSafeEqual } from 'node:crypto';

/** The opt-out link's proof that it was mailed to `address` (docs/mail.md, Unsubscribe): an HMAC no one else can make. */
export function unsubscribeToken(secret: string, address: string): string {
  return createHmac('sha256', secret).update(`mail-unsubscribe:${address.toLowerCase()}`).digest('base64url');
}

export function unsubscribeTokenValid(secret: string, address: string, token: string): boolean {
  const expected = Buffer.from(unsubscribeToken(secret, address));
  const given = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The link, always on PUBLIC_URL (never a request's Host header). */
export function unsubscribeUrl(publicUrl: string, secret: string, address: string): string {
  const query = new URLSearchParams({ address: address.toLowerCase(), token: unsubscribeToken(secret, address) });
  return `${publicUrl}/mail/unsubscribe?${query.toString()}`;
}
