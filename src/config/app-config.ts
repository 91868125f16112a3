import type { EnvironmentVariables } from './env.schema';

/** Resolved runtime configuration: environment plus generated secrets and the database URL. */
export interface AppConfig {
  port: number;
  dataDir: string;
  databaseUrl: string;
  apiKeys: string[];
  adminUsername: string;
  adminPassword?: string;
  sessionSecret: string;
  signingKeyFile: string;
  /** Encrypts the keyring's private keys and the webhook secrets at rest (AES-256-GCM); every instance needs the same one. */
  keyringSecret: string;
  redisUrl?: string;
  /** Namespace of every Redis key (rate-limit counters, sessions), so deployments can share one Redis. */
  redisKeyPrefix?: string;
  trustProxy?: string;
  /**
   * Per-IP requests per minute; `loginPage` (GET /login) and `stores` (the store event routes) default to
   * DEFAULT_LOGIN_PAGE_RATE_LIMIT and DEFAULT_STORES_RATE_LIMIT when a config built in code omits them.
   */
  rateLimits: {
    activate: number;
    deactivate: number;
    validate: number;
    heartbeat: number;
    admin: number;
    login: number;
    loginPage?: number;
    stores?: number;
  };
  lastSeenIntervalSeconds: number;
  /** Seconds between sweeps that release dead seats (see SeatSweepService). */
  seatSweepIntervalSeconds: number;
  logLevel: EnvironmentVariables['LOG_LEVEL'];
  dbPoolSize: number;
  metricsToken?: string;
  /**
   * Set in the workers of WEB_CONCURRENCY > 1 (src/cluster): the primary runs the job engine's clock and maintenance,
   * and /metrics answers with the sum over every worker, which the primary gathers.
   */
  clusterWorker?: boolean;
  /** Store integrations (docs/stores.md); absent in a config built in code: no store is connected. */
  stores?: {
    stripeWebhookSecret?: string;
    stripeApiKey?: string;
    /** Where the Stripe SDK sends its API calls (a local stand-in in tests); Stripe's own host when absent. */
    stripeApiHost?: { host: string; port: number; protocol: 'http' | 'https' };
    paddleWebhookSecret?: string;
    paddleApiKey?: string;
    /** Where the Paddle SDK sends customers.get (a local stand-in in tests); Paddle's production API when absent. */
    paddleApiUrl?: string;
    lemonsqueezyWebhookSecret?: string;
    acceptTestEvents: boolean;
  };
  webhooks: {
    /** Seconds to wait before each retry; after the last one a delivery is `failed`. */
    retryScheduleSeconds: number[];
    expiringDays: number;
    allowPrivateNetworks: boolean;
  };
  /** The base of every link the server sends (docs/mail.md, Configuration); never taken from a request's Host header. */
  publicUrl: string;
  /** True when PUBLIC_URL was unset and publicUrl is http://localhost:PORT (a start-up warning says so). */
  publicUrlDefaulted?: boolean;
  mail: MailConfig;
  /** The customer portal (docs/portal.md); absent in a config built in code: on, with the defaults of PortalConfig. */
  portal?: PortalConfig;
  /** Staff sign-in (docs/dashboard.md, Second factors; Single sign-on); absent in a config built in code: the defaults of staffConfig. */
  staff?: StaffConfig;
  /** Releases (docs/releases.md); absent in a config built in code: files under dataDir/releases, the defaults below. */
  releases?: ReleasesConfig;
}

/** Dashboard roles, most powerful first, as OIDC_DEFAULT_ROLE accepts them (docs/dashboard.md, Single sign-on). */
export const STAFF_ROLES = ['owner', 'admin', 'support', 'viewer'] as const;
export type StaffRole = (typeof STAFF_ROLES)[number];

export interface OidcConfig {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** A claim holding a role name or a list of them; the most powerful known one wins. */
  roleClaim?: string;
  /** The role when the claim names none; without it such an account gets no access. */
  defaultRole?: StaffRole;
}

export interface StaffConfig {
  /** STAFF_REQUIRE_2FA: a password account without a second factor enrols one at its next sign-in. */
  requireSecondFactor: boolean;
  /** RATE_LIMIT_STAFF_SIGN_IN: failed sign-ins per account within STAFF_SIGN_IN_WINDOW_MS before attempts are delayed. */
  signInLimit: number;
  /** How long each attempt past the limit waits (tests shorten it). */
  signInDelayMs: number;
  /** STAFF_SUDO_MINUTES: how long a sign-in or a re-authentication allows sensitive actions (docs/security.md, Sudo mode). */
  sudoMinutes?: number;
  oidc?: OidcConfig;
}

export const DEFAULT_STAFF_SIGN_IN_LIMIT = 10;
export const STAFF_SIGN_IN_WINDOW_MS = 15 * 60_000;
export const DEFAULT_STAFF_SIGN_IN_DELAY_MS = 3_000;
export const DEFAULT_STAFF_SUDO_MINUTES = 10;

export function staffConfig(config: Pick<AppConfig, 'staff'>): StaffConfig {
  return (
    config.staff ?? { requireSecondFactor: false, signInLimit: DEFAULT_STAFF_SIGN_IN_LIMIT, signInDelayMs: DEFAULT_STAFF_SIGN_IN_DELAY_MS }
  );
}

export interface ReleasesConfig {
  maxBytes: number;
  linkSeconds: number;
  /** Set: artifacts live in this S3-compatible bucket instead of the filesystem. */
  s3?: { bucket: string; endpoint?: string; region: string };
}

export const DEFAULT_RELEASES_CONFIG: ReleasesConfig = { maxBytes: 2 * 1024 ** 3, linkSeconds: 600 };

export interface PortalConfig {
  /** PORTAL_ENABLED=false: every /portal page answers 404. */
  enabled: boolean;
  /** Sign-in links asked for per IP and per address within PORTAL_LOGIN_WINDOW_MS. */
  loginLimit: number;
  /** The store's own customer portal by store name (stripe, paddle, lemonsqueezy), linked from store-made licences. */
  storePortalUrls: Record<string, string>;
}

export const DEFAULT_PORTAL_LOGIN_LIMIT = 5;
/** The window of RATE_LIMIT_PORTAL_LOGIN: 15 minutes. */
export const PORTAL_LOGIN_WINDOW_MS = 15 * 60_000;

/** The portal's settings, with the defaults for a config built in code without them. */
export function portalConfig(config: Pick<AppConfig, 'portal'>): PortalConfig {
  return config.portal ?? { enabled: true, loginLimit: DEFAULT_PORTAL_LOGIN_LIMIT, storePortalUrls: {} };
}

/** Every kind of mail the server sends, to customers and (staff_invite) to new staff (docs/mail.md, Kinds). */
export const MAIL_KINDS = ['license_issued', 'expiring_soon', 'expired', 'seat_released', 'portal_sign_in', 'staff_invite'] as const;
export type MailKind = (typeof MAIL_KINDS)[number];

export interface MailConfig {
  /** smtp:// or smtps:// with credentials; unset, messages are written as .eml files under DATA_DIR/mail/. */
  smtpUrl?: string;
  from: string;
  brandName: string;
  replyTo?: string;
  disabledKinds: MailKind[];
  /** Seconds to wait before each retry of a temporary failure; after the last one a message is `failed`. */
  retryScheduleSeconds: number[];
}

export const DEFAULT_LOGIN_PAGE_RATE_LIMIT = 30;
/** RATE_LIMIT_STORES: a store retries a burst of events at once, far below this (docs/stores.md, Signatures). */
export const DEFAULT_STORES_RATE_LIMIT = 600;

export const APP_CONFIG = Symbol('APP_CONFIG');
