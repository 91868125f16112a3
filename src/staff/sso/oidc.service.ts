import { Inject, Injectable, Logger } from '@nestjs/common';
import * as oidc from 'openid-client';
import type { EntityManager } from 'typeorm';
import { AppError } from '../../common/errors/app-error';
import { ErrorCode } from '../../common/errors/error-codes';
import { APP_CONFIG, type AppConfig, type OidcConfig, type StaffRole, staffConfig } from '../../config/app-config';
import { claimAt, roleFromClaim } from './roles-from-claim';
import { SsoIdentitiesRepository } from './sso-identities.repository';

/** What the callback must match, kept in the visitor's session between the redirect and the callback. */
export interface SsoChecks {
  codeVerifier: string;
  state: string;
  nonce: string;
}

/** Who the provider says signed in, and the role that gives. */
export interface SsoIdentity {
  issuer: string;
  subject: string;
  /** A username to suggest for a new account: preferred_username, else email, else the sub. */
  name: string;
  email: string | null;
  role: StaffRole | null;
}

export const SSO_CALLBACK_PATH = '/login/sso/callback';

/**
 * OpenID Connect sign-in (docs/dashboard.md, Single sign-on) with openid-client: discovery of OIDC_ISSUER, the
 * authorization code flow with PKCE (S256), state and nonce, and the ID token checked by the library (signature,
 * issuer, audience, expiry, nonce). Only loopback issuers may use plain HTTP (tests, a provider on the same host).
 */
@Injectable()
export class OidcService {
  private readonly settings?: OidcConfig;
  private readonly redirectUri: string;
  private configuration?: Promise<oidc.Configuration>;
  private readonly logger = new Logger('SingleSignOn');

  constructor(
    private readonly identities: SsoIdentitiesRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.settings = staffConfig(config).oidc;
    this.redirectUri = `${config.publicUrl}${SSO_CALLBACK_PATH}`;
  }

  get enabled(): boolean {
    return this.settings !== undefined;
  }

  /** The provider's address to send the browser to, and the checks its answer must pass. */
  async start(): Promise<{ url: string; checks: SsoChecks }> {
    const config = await this.provider();
    const checks = { codeVerifier: oidc.randomPKCECodeVerifier(), state: oidc.randomState(), nonce: oidc.randomNonce() };
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri,
      scope: 'openid profile email',
      code_challenge: await oidc.calculatePKCECodeChallenge(checks.codeVerifier),
      code_challenge_method: 'S256',
      state: checks.state,
      nonce: checks.nonce,
    });
    return { url: url.href, checks };
  }

  /**
   * Exchanges the callback's code (with the PKCE verifier) and checks state, nonce and the ID token; the identity, or
   * a 401 AppError for any mismatch (never the library's message, which may echo the provider's answer).
   */
  async finish(callbackQuery: string, checks: SsoChecks): Promise<SsoIdentity> {
    const config = await this.provider();
    const settings = this.settings!;
    let claims: Record<string, unknown>;
    try {
      const tokens = await oidc.authorizationCodeGrant(config, new URL(`${this.redirectUri}?${callbackQuery}`), {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
        expectedNonce: checks.nonce,
        idTokenExpected: true,
      });
      claims = { ...(tokens.claims() ?? {}) };
      // Providers put profile claims and groups in the ID token or only in userinfo; the ID token's win.
      if (tokens.access_token && config.serverMetadata().userinfo_endpoint) {
        claims = { ...(await oidc.fetchUserInfo(config, tokens.access_token, String(claims.sub))), ...claims };
      }
    } catch (err) {
      this.logger.warn(`single sign-on refused: ${err instanceof Error ? err.message : String(err)}`);
      throw new AppError(ErrorCode.UNAUTHORIZED, 401, 'Single sign-on did not complete. Try again from the login page.');
    }
    const text = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : null);
    const subject = text(claims.sub)!;
    return {
      issuer: config.serverMetadata().issuer,
      subject,
      name: text(claims.preferred_username) ?? text(claims.email) ?? subject,
      email: text(claims.email),
      role: roleFromClaim(settings.roleClaim ? claimAt(claims, settings.roleClaim) : undefined, settings.defaultRole),
    };
  }

  userIdOf(identity: SsoIdentity): Promise<number | null> {
    return this.identities.userIdOf(identity.issuer, identity.subject);
  }

  link(userId: number, identity: SsoIdentity, manager: EntityManager): Promise<boolean> {
    return this.identities.link(userId, identity.issuer, identity.subject, manager);
  }

  isSsoAccount(userId: number): Promise<boolean> {
    return this.identities.isSsoAccount(userId);
  }

  /** Discovery once per process; a failed one is retried at the next sign-in (the provider may have been down). */
  private provider(): Promise<oidc.Configuration> {
    const settings = this.settings;
    if (!settings) throw AppError.notFound('Single sign-on');
    const issuer = new URL(settings.issuer);
    const loopback = ['127.0.0.1', '[::1]', 'localhost'].includes(issuer.hostname);
    this.configuration ??= oidc
      .discovery(issuer, settings.clientId, settings.clientSecret, undefined, {
        execute: issuer.protocol === 'http:' && loopback ? [oidc.allowInsecureRequests] : [],
        timeout: 10,
      })
      .catch((err: unknown) => {
        this.configuration = undefined;
        this.logger.warn(`OpenID discovery of ${settings.issuer} failed: ${err instanceof Error ? err.message : String(err)}`);
        throw new AppError(ErrorCode.SERVICE_UNAVAILABLE, 503, 'Single sign-on is unavailable right now; try again shortly.');
      });
    return this.configuration;
  }
}
