import type { Request, Response } from 'express';
import { type AnonymousForm, LOGIN_FORM_TTL_MS, LoginFormTokens } from './login-form-token';

const SECRET = { sessionSecret: 'unit-session-secret-0123456789abcdef0123' };
/** A form like the staff login's (each door passes its own). */
const FORM: AnonymousForm = { cookie: 'licence_login', path: '/login', purpose: 'login-form-token/v1' };
const LOGIN_COOKIE = FORM.cookie;

/** The login cookie a response set, as the browser would send it back. */
function issued(tokens: LoginFormTokens, cookieHeader?: string, secure = false) {
  const set: { name: string; value: string; options: Record<string, unknown> }[] = [];
  const res = { cookie: (name: string, value: string, options: Record<string, unknown>) => set.push({ name, value, options }) };
  const req = { headers: { cookie: cookieHeader }, secure } as unknown as Request;
  const token = tokens.formToken(req, res as unknown as Response);
  return { token, set, cookie: set[0] ? `${set[0].name}=${set[0].value}` : cookieHeader };
}

const requestWith = (cookie: string | undefined) => ({ headers: { cookie } }) as unknown as Request;

describe('LoginFormTokens (stateless CSRF token of the login form)', () => {
  let now = 1_800_000_000_000;
  const tokens = new LoginFormTokens(SECRET, FORM, () => now);

  it('sets a short-lived, HttpOnly, SameSite=Strict cookie limited to /login, Secure over HTTPS', () => {
    const plain = issued(tokens);
    expect(plain.set).toHaveLength(1);
    expect(plain.set[0]).toMatchObject({
      name: LOGIN_COOKIE,
      options: { httpOnly: true, sameSite: 'strict', path: '/login', maxAge: LOGIN_FORM_TTL_MS, secure: false },
    });
    expect(LOGIN_FORM_TTL_MS).toBeLessThanOrEqual(15 * 60_000);
    expect(issued(tokens, undefined, true).set[0].options.secure).toBe(true);
  });

  it('accepts the form token with the cookie it was made for', () => {
    const { token, cookie } = issued(tokens);
    expect(tokens.verify(requestWith(cookie), token)).toBe(true);
    expect(tokens.verify(requestWith(`other=1; ${cookie}; more=2`), token)).toBe(true);
  });

  it('refuses a missing token, a missing cookie, a token of another cookie, and non-string tokens', () => {
    const first = issued(tokens);
    const second = issued(tokens);
    expect(tokens.verify(requestWith(first.cookie), undefined)).toBe(false);
    expect(tokens.verify(requestWith(first.cookie), '')).toBe(false);
    expect(tokens.verify(requestWith(undefined), first.token)).toBe(false);
    expect(tokens.verify(requestWith(first.cookie), second.token)).toBe(false);
    expect(tokens.verify(requestWith(first.cookie), [first.token])).toBe(false);
    expect(tokens.verify(requestWith(first.cookie), `${first.token}x`)).toBe(false);
  });

  it('refuses a cookie whose nonce, expiry or MAC was changed, and one signed with another secret', () => {
    const { token, cookie } = issued(tokens);
    const [nonce, expires, mac] = (cookie as string).slice(LOGIN_COOKIE.length + 1).split('.');
    const later = String(Number(expires) + 3_600_000);
    const otherNonce = `${nonce[0] === 'A' ? 'B' : 'A'}${nonce.slice(1)}`;
    for (const forged of [`${otherNonce}.${expires}.${mac}`, `${nonce}.${later}.${mac}`, `${nonce}.${expires}.${mac.slice(1)}`]) {
      expect(tokens.verify(requestWith(`${LOGIN_COOKIE}=${forged}`), token)).toBe(false);
    }
    expect(tokens.verify(requestWith(`${LOGIN_COOKIE}=${nonce}.${expires}.${mac}.extra`), token)).toBe(false);
    const elsewhere = new LoginFormTokens({ sessionSecret: 'another-secret-0123456789abcdef0123456' }, FORM, () => now);
    const foreign = issued(elsewhere);
    expect(tokens.verify(requestWith(foreign.cookie), foreign.token)).toBe(false);
  });

  it('expires with the cookie: valid until its lifetime ends, refused after', () => {
    const { token, cookie } = issued(tokens);
    now += LOGIN_FORM_TTL_MS - 1;
    expect(tokens.verify(requestWith(cookie), token)).toBe(true);
    now += 1;
    expect(tokens.verify(requestWith(cookie), token)).toBe(false);
  });

  it('keeps the held cookie while more than half its lifetime is left (a second tab stays valid), then renews it', () => {
    const first = issued(tokens);
    now += LOGIN_FORM_TTL_MS / 2 - 1;
    const again = issued(tokens, first.cookie);
    expect(again.set).toHaveLength(0);
    expect(again.token).toBe(first.token);
    now += 1;
    const renewed = issued(tokens, first.cookie);
    expect(renewed.set).toHaveLength(1);
    expect(renewed.token).not.toBe(first.token);
    expect(tokens.verify(requestWith(renewed.cookie), renewed.token)).toBe(true);
  });
});
