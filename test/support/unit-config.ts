import { AppConfig } from '../../src/config/app-config';

/** A complete AppConfig for unit specs that construct providers by hand. */
export function testConfigFor(overrides: Partial<AppConfig> = {}): AppConfig {
  return {
    port: 0,
    dataDir: '/tmp',
    databaseUrl: 'postgres://unused@127.0.0.1:1/unused',
    apiKeys: ['unit-test-key-0123456789'],
    adminUsername: 'admin',
    sessionSecret: 'unit-test-session-secret-0123456789abcdef',
    signingKeyFile: '/nonexistent',
    keyringSecret: 'unit-test-keyring-secret-0123456789abcdef',
    rateLimits: { activate: 10, deactivate: 10, validate: 60, heartbeat: 60, admin: 600, login: 5 },
    lastSeenIntervalSeconds: 60,
    seatSweepIntervalSeconds: 15,
    webhooks: { retryScheduleSeconds: [5, 30], expiringDays: 7, allowPrivateNetworks: false },
    publicUrl: 'https://licences.example.test',
    mail: { from: 'licences@example.test', brandName: 'Example Vendor', disabledKinds: [], retryScheduleSeconds: [1, 1] },
    logLevel: 'silent',
    dbPoolSize: 5,
    ...overrides,
  };
}
