import { resolve } from 'node:path';
import { generateApiKey, generateKeyringSecret, generateSessionSecret, loadOrCreateSecret } from './secrets';
import { AppConfig, DEFAULT_STAFF_SIGN_IN_DELAY_MS, type MailKind, type OidcConfig } from './app-config';
import { ConfigError } from './config.error';
import { EnvironmentVariables } from './env.schema';

export interface GeneratedSecrets {
  apiKey?: string;
  sessionSecret?: boolean;
  keyringSecret?: boolean;
}

/**
 * Builds the runtime config from validated env: secrets not given in the environment
 * are read from DATA_DIR, or generated there on first start (and reported for printing).
 */
export function buildConfig(env: EnvironmentVariables, databaseUrl: string): { config: AppConfig; generated: GeneratedSecrets } {
  const dataDir = resolve(env.DATA_DIR);
  const generated: GeneratedSecrets = {};
  let apiKeys: string[];
  if (env.API_KEY) {
    apiKeys = env.API_KEY.split(',')
      .map((k) => k.trim())
      .filter(Boolean);
  } else {
    const key = loadOrCreateSecret(dataDir, 'api-key', generateApiKey);
    if (key.generated) generated.apiKey = key.value;
    apiKeys = [key.value];
  }
  let sessionSecret = env.SESSION_SECRET;
  if (!sessionSecret) {
    const secret = loadOrCreateSecret(dataDir, 'session-secret', generateSessionSecret);
    generated.sessionSecret = secret.generated;
    sessionSecret = secret.value;
  }
  let keyringSecret = env.KEYRING_SECRET;
  if (!keyringSecret) {
    const secret = loadOrCreateSecret(dataDir, 'keyring-secret', generateKeyringSecret);
    generated.keyringSecret = secret.generated;
    keyringSecret = secret.value;
  }
  const config: AppConfig = {
    port: env.PORT,
    dataDir,
    databaseUrl,
    apiKeys,
    adminUsername: env.ADMIN_USERNAME,
    adminPassword: env.ADMIN_PASSWORD,
    sessionSecret,
    signingKeyFile: resolve(env.SIGNING_KEY_FILE ?? resolve(dataDir, 'signing-key.pem')),
    keyringSecret,
    redisUrl: env.REDIS_URL,
    redisKeyPrefix: env.REDIS_KEY_PREFIX,
    trustProxy: env.TRUST_PROXY,
    rateLimits: {
      activate: env.RATE_LIMIT_ACTIVATE,
      deactivate: env.RATE_LIMIT_DEACTIVATE,
      validate: env.RATE_LIMIT_VALIDATE,
      heartbeat: env.RATE_LIMIT_HEARTBEAT,
      admin: env.RATE_LIMIT_ADMIN,
      login: env.RATE_LIMIT_LOGIN,
      loginPage: env.RATE_LIMIT_LOGIN_PAGE,
      stores: env.RATE_LIMIT_STORES,
    },
    lastSeenIntervalSeconds: env.LAST_SEEN_INTERVAL,
    seatSweepIntervalSeconds: env.SEAT_SWEEP_INTERVAL,
    logLevel: env.LOG_LEVEL,
    dbPoolSize: env.DB_POOL_SIZE,
    metricsToken: env.METRICS_TOKEN,
    stores: {
      stripeWebhookSecret: env.STRIPE_WEBHOOK_SECRET,
      stripeApiKey: env.STRIPE_API_KEY,
      paddleWebhookSecret: env.PADDLE_WEBHOOK_SECRET,
      paddleApiKey: env.PADDLE_API_KEY,
      lemonsqueezyWebhookSecret: env.LEMONSQUEEZY_WEBHOOK_SECRET,
      acceptTestEvents: env.STORES_ACCEPT_TEST_EVENTS === 'true',
    },
    webhooks: {
      retryScheduleSeconds: env.WEBHOOK_RETRY_SCHEDULE.split(',').map((s) => Number(s.trim())),
      expiringDays: env.WEBHOOK_EXPIRING_DAYS,
      allowPrivateNetworks: env.WEBHOOK_ALLOW_PRIVATE_NETWORKS === 'true',
    },
    publicUrl: (env.PUBLIC_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, ''),
    publicUrlDefaulted: env.PUBLIC_URL === undefined,
    mail: {
      smtpUrl: env.SMTP_URL,
      from: env.MAIL_FROM,
      brandName: env.MAIL_BRAND_NAME,
      replyTo: env.MAIL_REPLY_TO,
      disabledKinds: (env.MAIL_DISABLED_KINDS ?? '')
        .split(',')
        .map((k) => k.trim())
        .filter(Boolean) as MailKind[],
      retryScheduleSeconds: env.MAIL_RETRY_SCHEDULE.split(',').map((s) => Number(s.trim())),
    },
    portal: {
      enabled: env.PORTAL_ENABLED === 'true',
      loginLimit: env.RATE_LIMIT_PORTAL_LOGIN,
      storePortalUrls: definedEntries({
        stripe: env.STRIPE_CUSTOMER_PORTAL_URL,
        paddle: env.PADDLE_CUSTOMER_PORTAL_URL,
        lemonsqueezy: env.LEMONSQUEEZY_CUSTOMER_PORTAL_URL,
      }),
    },
    staff: {
      requireSecondFactor: env.STAFF_REQUIRE_2FA === 'true',
      signInLimit: env.RATE_LIMIT_STAFF_SIGN_IN,
      signInDelayMs: DEFAULT_STAFF_SIGN_IN_DELAY_MS,
      sudoMinutes: env.STAFF_SUDO_MINUTES,
      oidc: oidcConfig(env),
    },
    releases: {
      maxBytes: env.RELEASES_MAX_BYTES,
      linkSeconds: env.RELEASES_LINK_SECONDS,
      ...(env.RELEASES_S3_BUCKET
        ? { s3: { bucket: env.RELEASES_S3_BUCKET, endpoint: env.RELEASES_S3_ENDPOINT, region: env.RELEASES_S3_REGION ?? 'us-east-1' } }
        : {}),
    },
  };
  return { config, generated };
}

/** Single sign-on when its three settings are all set; some but not all is a configuration error. */
function oidcConfig(env: EnvironmentVariables): OidcConfig | undefined {
  const { OIDC_ISSUER: issuer, OIDC_CLIENT_ID: clientId, OIDC_CLIENT_SECRET: clientSecret } = env;
  if (!issuer && !clientId && !clientSecret) return undefined;
  if (!issuer || !clientId || !clientSecret) {
    throw new ConfigError('OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET must be set together (or none of them)');
  }
  return { issuer, clientId, clientSecret, roleClaim: env.OIDC_ROLE_CLAIM, defaultRole: env.OIDC_DEFAULT_ROLE };
}

/** The entries whose value is set. */
function definedEntries(values: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter((entry): entry is [string, string] => entry[1] !== undefined));
}
