import type { Provider } from '@nestjs/common';
import type { Request, Response } from 'express';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';

export const LOGIN_COOKIE = 'licence_login';
/** How long a login form stays usable: minutes, not the 8 hours of a logged-in session. */
export const LOGIN_FORM_TTL_MS = 10 * 60_000;

/** Where an anonymous form's cookie lives and what its MACs are keyed for. */
export interface AnonymousForm {
  cookie: string;
  path: string;
  purpose: string;
}

const STAFF_LOGIN_FORM: AnonymousForm = { cookie: LOGIN_COOKIE, path: '/login', purpose: 'login-form-token/v1' };

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of header?.split(';') ?? []) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function sameText(a: string, b: string): boolean {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The login form's CSRF token without any server state (a signed double-submit token): GET /login sets a short-lived
 * cookie holding a random nonce, its expiry and their HMAC, and puts a second HMAC of the nonce into the form. POST
 * /login needs both, matching and unexpired. Another site can neither read the cookie nor set it on this host, so it
 * cannot produce the pair; and an anonymous visitor costs no session row (before, every GET /login stored one for 8 h).
 */
export class LoginFormTokens {
  private readonly key: Buffer;

  /** `form`: the cookie's name and path and the key's purpose; the portal's sign-in forms use their own (docs/portal.md, Forms). */
  constructor(
    config: Pick<AppConfig, 'sessionSecret'>,
    private readonly now: () => number = Date.now,
    private readonly form: AnonymousForm = STAFF_LOGIN_FORM,
  ) {
    // A key of its own, derived from the session secret, so these MACs never collide with the session cookie's signature.
    this.key = createHmac('sha256', config.sessionSecret).update(form.purpose).digest();
  }

  /**
   * The form token for this visitor: bound to the login cookie it already holds while that has more than half its
   * lifetime left (so a second tab or a failed attempt does not invalidate the first form), else to a fresh cookie.
   */
  formToken(req: Request, res: Response): string {
    const held = this.readCookie(req);
    if (held && held.expires - this.now() > LOGIN_FORM_TTL_MS / 2) return this.mac('form', held.nonce);
    const nonce = randomBytes(18).toString('base64url');
    const payload = `${nonce}.${this.now() + LOGIN_FORM_TTL_MS}`;
    res.cookie(this.form.cookie, `${payload}.${this.mac('cookie', payload)}`, {
      httpOnly: true,
      sameSite: 'strict',
      secure: req.secure,
      path: this.form.path,
      maxAge: LOGIN_FORM_TTL_MS,
    });
    return this.mac('form', nonce);
  }

  /** True when the request brings an unexpired login cookie of this server and the form token made for that cookie. */
  verify(req: Request, formToken: unknown): boolean {
    const held = this.readCookie(req);
    return typeof formToken === 'string' && held !== undefined && sameText(formToken, this.mac('form', held.nonce));
  }

  /** The nonce and expiry of the request's login cookie when its MAC is ours and it has not expired. */
  private readCookie(req: Request): { nonce: string; expires: number } | undefined {
    const cookie = cookieValue(req.headers.cookie, this.form.cookie);
    const [nonce, expires, mac, ...rest] = cookie?.split('.') ?? [];
    if (rest.length > 0 || !nonce || !/^\d{1,15}$/.test(expires ?? '') || !mac) return undefined;
    if (!sameText(mac, this.mac('cookie', `${nonce}.${expires}`)) || Number(expires) <= this.now()) return undefined;
    return { nonce, expires: Number(expires) };
  }

  private mac(purpose: 'cookie' | 'form', value: string): string {
    return createHmac('sha256', this.key).update(`${purpose}:${value}`).digest('base64url');
  }
}

/** The invitation's accept form (docs/dashboard.md, Staff and roles): the same scheme, its own cookie, path and key. */
export const STAFF_INVITE_FORM_PATH = '/staff/invite';
export class InviteFormTokens extends LoginFormTokens {}

export const inviteFormTokensProvider: Provider = {
  provide: InviteFormTokens,
  inject: [APP_CONFIG],
  useFactory: (config: AppConfig) =>
    new InviteFormTokens(config, Date.now, {
      cookie: 'licence_invite_form',
      path: STAFF_INVITE_FORM_PATH,
      purpose: 'invite-form-token/v1',
    }),
};

export const loginFormTokensProvider: Provider = {
  provide: LoginFormTokens,
  inject: [APP_CONFIG],
  useFactory: (config: AppConfig) => new LoginFormTokens(config),
};
