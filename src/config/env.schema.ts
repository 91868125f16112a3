import { availableParallelism } from 'node:os';
import { applyDecorators } from '@nestjs/common';
import { plainToInstance, Transform } from 'class-transformer';
import ipaddr from 'ipaddr.js';
import {
  IsIn,
  IsEmail,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  registerDecorator,
  validateSync,
  ValidationOptions,
} from 'class-validator';
import {
  DEFAULT_LOGIN_PAGE_RATE_LIMIT,
  DEFAULT_PORTAL_LOGIN_LIMIT,
  DEFAULT_STAFF_SIGN_IN_LIMIT,
  DEFAULT_STAFF_SUDO_MINUTES,
  DEFAULT_STORES_RATE_LIMIT,
  MAIL_KINDS,
  STAFF_ROLES,
} from './app-config';
import { ConfigError } from './config.error';

const toInt = ({ value }: { value: unknown }) => (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value);
const emptyToUndefined = ({ value }: { value: unknown }) => (typeof value === 'string' && value.trim() === '' ? undefined : value);

export const ENV_NAMES = [
  'PORT',
  'DATABASE_URL',
  'DATA_DIR',
  'API_KEY',
  'ADMIN_USERNAME',
  'ADMIN_PASSWORD',
  'SESSION_SECRET',
  'SIGNING_KEY_FILE',
  'KEYRING_SECRET',
  'REDIS_URL',
  'REDIS_KEY_PREFIX',
  'TRUST_PROXY',
  'RATE_LIMIT_ACTIVATE',
  'RATE_LIMIT_DEACTIVATE',
  'RATE_LIMIT_VALIDATE',
  'RATE_LIMIT_HEARTBEAT',
  'RATE_LIMIT_ADMIN',
  'RATE_LIMIT_LOGIN',
  'RATE_LIMIT_LOGIN_PAGE',
  'RATE_LIMIT_STORES',
  'LAST_SEEN_INTERVAL',
  'SEAT_SWEEP_INTERVAL',
  'LOG_LEVEL',
  'NO_COLOR',
  'DB_POOL_SIZE',
  'METRICS_TOKEN',
  'WEBHOOK_RETRY_SCHEDULE',
  'WEBHOOK_EXPIRING_DAYS',
  'WEBHOOK_ALLOW_PRIVATE_NETWORKS',
  'STRIPE_WEBHOOK_SECRET',
  'STRIPE_API_KEY',
  'PADDLE_WEBHOOK_SECRET',
  'PADDLE_API_KEY',
  'LEMONSQUEEZY_WEBHOOK_SECRET',
  'STORES_ACCEPT_TEST_EVENTS',
  'WEB_CONCURRENCY',
  'PUBLIC_URL',
  'SMTP_URL',
  'MAIL_FROM',
  'MAIL_BRAND_NAME',
  'MAIL_REPLY_TO',
  'MAIL_DISABLED_KINDS',
  'MAIL_RETRY_SCHEDULE',
  'PORTAL_ENABLED',
  'RATE_LIMIT_PORTAL_LOGIN',
  'STRIPE_CUSTOMER_PORTAL_URL',
  'PADDLE_CUSTOMER_PORTAL_URL',
  'LEMONSQUEEZY_CUSTOMER_PORTAL_URL',
  'STAFF_REQUIRE_2FA',
  'RATE_LIMIT_STAFF_SIGN_IN',
  'STAFF_SUDO_MINUTES',
  'OIDC_ISSUER',
  'OIDC_CLIENT_ID',
  'OIDC_CLIENT_SECRET',
  'OIDC_ROLE_CLAIM',
  'OIDC_DEFAULT_ROLE',
  'RELEASES_MAX_BYTES',
  'RELEASES_LINK_SECONDS',
  'RELEASES_S3_BUCKET',
  'RELEASES_S3_ENDPOINT',
  'RELEASES_S3_REGION',
] as const;

/** More proxies than this in front of one server is a misconfiguration, and a large count trusts client-written hops. */
export const MAX_TRUSTED_HOPS = 5;

export const TRUST_EVERYONE_MESSAGE =
  'TRUST_PROXY=true (or a /0 range, a range of public addresses wider than IPv4 /13 or IPv6 /29, or more than ' +
  `${MAX_TRUSTED_HOPS} hops) believes X-Forwarded-For hops a client can write, so any client can pick its own IP and escape every per-IP ` +
  'rate limit: give the number of proxies in front of the server (e.g. TRUST_PROXY=1) or their addresses (e.g. loopback, 10.0.0.0/8)';

// A proxy fleet's public range is narrower than these (Cloudflare's widest published ranges are IPv4 /13 and IPv6 /29).
const MIN_PUBLIC_PREFIX = { ipv4: 13, ipv6: 29 } as const;
const NON_PUBLIC_BLOCKS = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '127.0.0.0/8', '169.254.0.0/16', '100.64.0.0/10']
  .concat(['fc00::/7', 'fe80::/10', '::1/128'])
  .map((cidr) => ipaddr.parseCIDR(cidr));

/** A range that lies outside the private, loopback and link-local blocks and is wider than one proxy fleet's. */
function trustsPublicSpace(entry: string): boolean {
  const cidr = entry.includes('/') ? entry : `${entry}/${entry.includes(':') ? 128 : 32}`;
  if (!ipaddr.isValidCIDR(cidr)) return false;
  const [address, bits] = ipaddr.parseCIDR(cidr);
  if (bits >= MIN_PUBLIC_PREFIX[address.kind()]) return false;
  return !NON_PUBLIC_BLOCKS.some(
    ([block, blockBits]) => block.kind() === address.kind() && bits >= blockBits && address.match(block, blockBits),
  );
}

/**
 * Values that let a client choose the IP the rate limits see (docs/deployment.md, Reverse proxy and TLS): `true`, a /0
 * range (Express then takes the left-most X-Forwarded-For entry, which the client writes), a wide public range (every
 * client connecting from it can spoof) and hop counts above MAX_TRUSTED_HOPS.
 */
export function trustsEveryone(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) > MAX_TRUSTED_HOPS;
  return value.split(',').some((part) => {
    const entry = part.trim().toLowerCase();
    return entry === 'true' || /\/0+$/.test(entry) || trustsPublicSpace(entry);
  });
}

function IsNotTrustEveryone(options: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isNotTrustEveryone',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: { validate: (value: unknown) => !trustsEveryone(value) },
    });
}

/** Most worker processes WEB_CONCURRENCY may ask for (and what `auto` is capped at). */
export const MAX_WEB_CONCURRENCY = 64;

const toConcurrency = ({ value }: { value: unknown }) => {
  if (typeof value !== 'string') return value;
  const trimmed = value.trim().toLowerCase();
  if (trimmed === '') return undefined;
  return /^\d+$/.test(trimmed) ? Number(trimmed) : trimmed;
};

function IsWebConcurrency(options: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isWebConcurrency',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: (value: unknown) =>
          value === undefined ||
          value === 'auto' ||
          (Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_WEB_CONCURRENCY),
      },
    });
}

/** The number of worker processes WEB_CONCURRENCY asks for: `auto` is every core this process may run on (at most 64). */
export function resolveWebConcurrency(value: number | 'auto' | undefined, cores: number = availableParallelism()): number {
  if (value === undefined) return 1;
  return value === 'auto' ? Math.max(1, Math.min(cores, MAX_WEB_CONCURRENCY)) : value;
}

/** A store's customer portal: https only, no spaces or quotes (it becomes a link on the portal's pages). */
const STORE_PORTAL_URL = /^https:\/\/[^\s"'<>]+$/;

const MAIL_KIND_LIST = new RegExp(`^\\s*(${MAIL_KINDS.join('|')})\\s*(,\\s*(${MAIL_KINDS.join('|')})\\s*)*$`);

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * The decorators in the order they would stand stacked above a property: TypeScript applies the lowest first, and
 * class-validator reports a variable's failed rules in the order they were applied.
 */
const stacked = (...decorators: PropertyDecorator[]): PropertyDecorator => applyDecorators(...decorators.reverse());

/** A whole number from `min` to `max`, written as digits. */
const WholeNumber = (min: number, max: number) => stacked(Transform(toInt), IsInt(), Min(min), Max(max));

/** Requests (or sign-ins) per window for one client: at least 1. */
const RequestLimit = () => WholeNumber(1, 1_000_000_000);

/** Unset or empty: the variable's default; else `rules` apply. */
const Optional = (...rules: PropertyDecorator[]) => stacked(Transform(emptyToUndefined), IsOptional(), ...rules);

/** Optional free text: unset or empty, or a string `rules` accept. */
const OptionalText = (...rules: PropertyDecorator[]) => Optional(IsString(), ...rules);

const TrueOrFalse = () => IsIn(['true', 'false'], { message: ({ property }) => `${property} must be true or false` });

/** A retry schedule: 1 to 20 delays in seconds. */
const DelayList = () =>
  Matches(/^\s*\d{1,6}\s*(,\s*\d{1,6}\s*){0,19}$/, {
    message: ({ property }) => `${property} must be 1 to 20 comma-separated delays in seconds (each up to 999999)`,
  });

const StorePortalUrl = () => Matches(STORE_PORTAL_URL, { message: ({ property }) => `${property} must be an https:// URL` });

/** Every environment variable the server reads (docs/configuration.md, Variables), validated once at boot. */
export class EnvironmentVariables {
  @WholeNumber(0, 65535)
  PORT = 3000;

  @Optional(Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'DATABASE_URL must be a postgres:// URL' }))
  DATABASE_URL?: string;

  @IsString()
  @MinLength(1)
  DATA_DIR = './data';

  @OptionalText(
    Matches(/^\s*[\x21-\x7e]{16,256}\s*(,\s*[\x21-\x7e]{16,256}\s*)*$/, {
      message: 'API_KEY must be one or more comma-separated keys of 16 to 256 printable characters',
    }),
  )
  API_KEY?: string;

  @IsString()
  @Matches(/^[A-Za-z0-9_.@-]{1,64}$/, { message: 'ADMIN_USERNAME must be 1-64 letters, digits or _.@-' })
  ADMIN_USERNAME = 'admin';

  @OptionalText(MinLength(8, { message: 'ADMIN_PASSWORD must be at least 8 characters' }), MaxLength(256))
  ADMIN_PASSWORD?: string;

  @OptionalText(MinLength(32, { message: 'SESSION_SECRET must be at least 32 characters' }))
  SESSION_SECRET?: string;

  @OptionalText()
  SIGNING_KEY_FILE?: string;

  @OptionalText(MinLength(32, { message: 'KEYRING_SECRET must be at least 32 characters' }))
  KEYRING_SECRET?: string;

  @Optional(Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must be a redis:// or rediss:// URL' }))
  REDIS_URL?: string;

  @Matches(/^[A-Za-z0-9:_.-]{0,64}$/, { message: 'REDIS_KEY_PREFIX must be up to 64 characters of A-Z a-z 0-9 : _ . -' })
  REDIS_KEY_PREFIX = 'licence:';

  @Optional(
    Matches(
      /^(true|false|\d{1,2}|(loopback|linklocal|uniquelocal|[0-9a-fA-F.:/]+)(\s*,\s*(loopback|linklocal|uniquelocal|[0-9a-fA-F.:/]+))*)$/,
      {
        message: 'TRUST_PROXY must be false, a hop count, or a comma-separated list of loopback/linklocal/uniquelocal/IP/CIDR',
      },
    ),
    IsNotTrustEveryone({ message: TRUST_EVERYONE_MESSAGE }),
  )
  TRUST_PROXY?: string;

  @RequestLimit()
  RATE_LIMIT_ACTIVATE = 10;

  @RequestLimit()
  RATE_LIMIT_DEACTIVATE = 10;

  @RequestLimit()
  RATE_LIMIT_VALIDATE = 60;

  @RequestLimit()
  RATE_LIMIT_HEARTBEAT = 60;

  @RequestLimit()
  RATE_LIMIT_ADMIN = 600;

  @RequestLimit()
  RATE_LIMIT_LOGIN = 5;

  @RequestLimit()
  RATE_LIMIT_LOGIN_PAGE = DEFAULT_LOGIN_PAGE_RATE_LIMIT;

  @RequestLimit()
  RATE_LIMIT_STORES = DEFAULT_STORES_RATE_LIMIT;

  @WholeNumber(0, 86_400)
  LAST_SEEN_INTERVAL = 60;

  @DelayList()
  WEBHOOK_RETRY_SCHEDULE = '5,30,120,600,1800,7200,28800,86400';

  @WholeNumber(1, 365)
  WEBHOOK_EXPIRING_DAYS = 7;

  @TrueOrFalse()
  WEBHOOK_ALLOW_PRIVATE_NETWORKS = 'false';

  /** Seconds between sweeps for dead seats (released within 60 s of death: docs/licences.md, The sweep, on the job engine). */
  @WholeNumber(1, 45)
  SEAT_SWEEP_INTERVAL = 15;

  @IsIn(LOG_LEVELS, { message: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` })
  LOG_LEVEL: (typeof LOG_LEVELS)[number] = 'info';

  /** Set to anything: the human-readable log on a terminal has no colours (src/common/http/log-format.ts reads it; no-color.org). */
  @IsOptional()
  @IsString()
  NO_COLOR?: string;

  @WholeNumber(1, 500)
  DB_POOL_SIZE = 20;

  @OptionalText(MinLength(16, { message: 'METRICS_TOKEN must be at least 16 characters' }))
  METRICS_TOKEN?: string;

  /** Unset: POST /api/v1/stores/stripe/events answers 404 (docs/stores.md, Connect Stripe). */
  @OptionalText()
  STRIPE_WEBHOOK_SECRET?: string;

  /** Reads a Checkout session's line items (docs/stores.md, What each event does). */
  @OptionalText()
  STRIPE_API_KEY?: string;

  /** Unset: POST /api/v1/stores/paddle/events answers 404 (docs/stores.md, Connect Paddle). */
  @OptionalText()
  PADDLE_WEBHOOK_SECRET?: string;

  /** Reads a buyer's e-mail with customers.get when no customer event brought it (docs/stores.md, Connect Paddle). */
  @OptionalText()
  PADDLE_API_KEY?: string;

  /** Unset: POST /api/v1/stores/lemonsqueezy/events answers 404 (docs/stores.md, Connect Lemon Squeezy). */
  @OptionalText()
  LEMONSQUEEZY_WEBHOOK_SECRET?: string;

  @TrueOrFalse()
  STORES_ACCEPT_TEST_EVENTS = 'false';

  /** Worker processes sharing the port (node:cluster); 1 runs everything in this one process. */
  @Transform(toConcurrency)
  @IsWebConcurrency({ message: `WEB_CONCURRENCY must be auto or a whole number from 1 to ${MAX_WEB_CONCURRENCY}` })
  WEB_CONCURRENCY?: number | 'auto';

  /** The base of every link the server sends (docs/mail.md, Configuration): scheme and host, optionally a path, no query. */
  @Optional(
    Matches(/^https?:\/\/[^\s/?#@]+(\/[^\s?#]*)?$/, {
      message: 'PUBLIC_URL must be an http:// or https:// URL without a query (e.g. https://licences.example.com)',
    }),
  )
  PUBLIC_URL?: string;

  @Optional(Matches(/^smtps?:\/\/\S+$/, { message: 'SMTP_URL must be an smtp:// or smtps:// URL' }))
  SMTP_URL?: string;

  /** A bare address: the display name is MAIL_BRAND_NAME, so no header is ever built from free text here. */
  @IsEmail(
    { require_tld: false, allow_display_name: false },
    { message: 'MAIL_FROM must be an e-mail address (e.g. licences@example.com)' },
  )
  MAIL_FROM = 'licences@localhost';

  @IsString()
  @MinLength(1)
  @MaxLength(100)
  @Matches(/^\P{Cc}+$/u, { message: 'MAIL_BRAND_NAME must be 1-100 characters without line breaks or control characters' })
  MAIL_BRAND_NAME = 'Licence server';

  @Optional(IsEmail({ require_tld: false, allow_display_name: false }, { message: 'MAIL_REPLY_TO must be an e-mail address' }))
  MAIL_REPLY_TO?: string;

  @Optional(Matches(MAIL_KIND_LIST, { message: `MAIL_DISABLED_KINDS must be a comma-separated list of ${MAIL_KINDS.join(', ')}` }))
  MAIL_DISABLED_KINDS?: string;

  @DelayList()
  MAIL_RETRY_SCHEDULE = '60,300,1800,7200,28800';

  /** false: every /portal page answers 404 (docs/portal.md). */
  @TrueOrFalse()
  PORTAL_ENABLED = 'true';

  /** Sign-in links per IP and per address in 15 minutes (docs/portal.md, Signing in). */
  @RequestLimit()
  RATE_LIMIT_PORTAL_LOGIN = DEFAULT_PORTAL_LOGIN_LIMIT;

  /** true: every password account enrols a second factor at its next sign-in (docs/dashboard.md, Second factors). */
  @TrueOrFalse()
  STAFF_REQUIRE_2FA = 'false';

  /** Failed sign-ins per account in 15 minutes before each attempt is delayed (docs/dashboard.md, Failed sign-ins). */
  @RequestLimit()
  RATE_LIMIT_STAFF_SIGN_IN = DEFAULT_STAFF_SIGN_IN_LIMIT;

  /** Minutes after a sign-in or re-authentication in which sensitive actions are not asked again (docs/security.md, Sudo mode). */
  @WholeNumber(1, 1440)
  STAFF_SUDO_MINUTES = DEFAULT_STAFF_SUDO_MINUTES;

  /** Single sign-on (docs/dashboard.md, Single sign-on): all three OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, or none. */
  @Optional(
    Matches(/^https?:\/\/[^\s?#]+$/, { message: 'OIDC_ISSUER must be an https:// URL without a query (http:// only for loopback)' }),
  )
  OIDC_ISSUER?: string;

  @OptionalText(MaxLength(255))
  OIDC_CLIENT_ID?: string;

  @OptionalText(MaxLength(1000))
  OIDC_CLIENT_SECRET?: string;

  /** A claim of the ID token or userinfo holding a role name or a list of them. */
  @Optional(Matches(/^[A-Za-z0-9_.:/-]{1,200}$/, { message: 'OIDC_ROLE_CLAIM must be a claim name' }))
  OIDC_ROLE_CLAIM?: string;

  @Optional(IsIn(STAFF_ROLES, { message: `OIDC_DEFAULT_ROLE must be one of ${STAFF_ROLES.join(', ')}` }))
  OIDC_DEFAULT_ROLE?: (typeof STAFF_ROLES)[number];

  @Optional(StorePortalUrl())
  STRIPE_CUSTOMER_PORTAL_URL?: string;

  @Optional(StorePortalUrl())
  PADDLE_CUSTOMER_PORTAL_URL?: string;

  @Optional(StorePortalUrl())
  LEMONSQUEEZY_CUSTOMER_PORTAL_URL?: string;

  /** The largest release artifact an upload may send, in bytes (docs/releases.md, Uploading artifacts). */
  @WholeNumber(1, Number.MAX_SAFE_INTEGER)
  RELEASES_MAX_BYTES = 2 * 1024 ** 3;

  /** How long a signed download link stays valid, in seconds (docs/releases.md, Download links). */
  @WholeNumber(10, 7 * 86_400)
  RELEASES_LINK_SECONDS = 600;

  /** Set: artifacts live in this S3 bucket instead of DATA_DIR/releases (docs/releases.md, Storage). */
  @Optional(
    Matches(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, { message: 'RELEASES_S3_BUCKET must be an S3 bucket name (3-63 of a-z 0-9 . -)' }),
  )
  RELEASES_S3_BUCKET?: string;

  /** An S3-compatible endpoint (MinIO, Cloudflare R2, ...); unset: AWS S3 itself. */
  @Optional(Matches(/^https?:\/\/[^\s?#]+$/, { message: 'RELEASES_S3_ENDPOINT must be an http:// or https:// URL' }))
  RELEASES_S3_ENDPOINT?: string;

  @Optional(Matches(/^[a-z0-9-]{1,32}$/, { message: 'RELEASES_S3_REGION must be a region name such as us-east-1 or auto' }))
  RELEASES_S3_REGION?: string;
}

/** Validates `env`; throws a ConfigError naming every bad variable. */
export function validateEnv(env: NodeJS.ProcessEnv): EnvironmentVariables {
  const relevant: Record<string, unknown> = {};
  for (const name of ENV_NAMES) if (env[name] !== undefined) relevant[name] = env[name];
  const parsed = plainToInstance(EnvironmentVariables, relevant, { exposeDefaultValues: true });
  const errors = validateSync(parsed, { whitelist: true, forbidUnknownValues: false });
  if (errors.length > 0) {
    const lines = errors.map((e) => `  ${e.property}: ${Object.values(e.constraints ?? {}).join('; ')}`);
    throw new ConfigError(`Invalid environment variables:\n${lines.join('\n')}`);
  }
  return parsed;
}
