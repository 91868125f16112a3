import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';

/** Where an open sign-in ceremony waits, and for how long. */
export interface CeremonyCookie {
  name: string;
  path: string;
  ttlMs: number;
}

/** The passkey challenge of a sign-in that has no session yet (docs/dashboard.md, Passkeys). */
export const PASSKEY_CEREMONY: CeremonyCookie = { name: 'licence_passkey', path: '/login', ttlMs: 5 * 60_000 };
/** The PKCE verifier, state and nonce of a single sign-on round trip (docs/dashboard.md, Single sign-on). */
export const SSO_CEREMONY: CeremonyCookie = { name: 'licence_sso', path: '/login/sso', ttlMs: 10 * 60_000 };

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of header?.split(';') ?? []) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * Nothing is stored for an anonymous visitor (docs/security.md, Sessions): a ceremony started without a session (the
 * SSO redirect, a passkey prompt) travels in a short-lived cookie sealed with AES-256-GCM under a key derived from the
 * session secret, so the visitor can neither read nor forge it. Opening it clears it: a ceremony is used once.
 */
@Injectable()
export class CeremonyCookies {
  private readonly key: Buffer;

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'sessionSecret'>) {
    this.key = createHmac('sha256', config.sessionSecret).update('ceremony-cookie/v1').digest();
  }

  seal(req: Request, res: Response, cookie: CeremonyCookie, payload: object): void {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(cookie.name));
    const body = Buffer.from(JSON.stringify({ ...payload, exp: Date.now() + cookie.ttlMs }), 'utf8');
    const sealed = Buffer.concat([iv, cipher.update(body), cipher.final(), cipher.getAuthTag()]).toString('base64url');
    // Lax, not strict: the provider sends the browser back with a top-level GET from its own site.
    res.cookie(cookie.name, sealed, { httpOnly: true, sameSite: 'lax', secure: req.secure, path: cookie.path, maxAge: cookie.ttlMs });
  }

  /** The ceremony's payload when the request brings an unexpired cookie of ours; the cookie is cleared either way. */
  open<T extends object>(req: Request, res: Response, cookie: CeremonyCookie): T | null {
    const value = cookieValue(req.headers.cookie, cookie.name);
    if (value === undefined) return null;
    res.clearCookie(cookie.name, { path: cookie.path });
    try {
      const raw = Buffer.from(value, 'base64url');
      if (raw.length < 29 || raw.length > 8192) return null;
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(cookie.name));
      decipher.setAuthTag(raw.subarray(raw.length - 16));
      const text = Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString('utf8');
      const payload = JSON.parse(text) as T & { exp?: unknown };
      return typeof payload.exp === 'number' && payload.exp > Date.now() ? payload : null;
    } catch {
      return null;
    }
  }
}
