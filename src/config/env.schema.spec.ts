import { ConfigError } from './config.error';
import { MAX_WEB_CONCURRENCY, resolveWebConcurrency, validateEnv } from './env.schema';

describe('validateEnv', () => {
  it('applies the documented defaults to an empty environment', () => {
    const env = validateEnv({});
    expect(env).toMatchObject({
      PORT: 3000,
      DATA_DIR: './data',
      ADMIN_USERNAME: 'admin',
      RATE_LIMIT_ACTIVATE: 10,
      RATE_LIMIT_DEACTIVATE: 10,
      RATE_LIMIT_VALIDATE: 60,
      RATE_LIMIT_LOGIN_PAGE: 30,
      RATE_LIMIT_HEARTBEAT: 60,
      LAST_SEEN_INTERVAL: 60,
      SEAT_SWEEP_INTERVAL: 15,
      LOG_LEVEL: 'info',
    });
    expect(env.DATABASE_URL).toBeUndefined();
    expect(env.API_KEY).toBeUndefined();
  });

  it('reads and converts given values', () => {
    const env = validateEnv({
      PORT: '8080',
      DATABASE_URL: 'postgres://u:p@db:5432/x',
      RATE_LIMIT_VALIDATE: '600',
      API_KEY: 'k1-0123456789abcdef, k2-0123456789abcdef',
      TRUST_PROXY: 'loopback',
    });
    expect(env.PORT).toBe(8080);
    expect(env.RATE_LIMIT_VALIDATE).toBe(600);
    expect(env.DATABASE_URL).toBe('postgres://u:p@db:5432/x');
    expect(env.TRUST_PROXY).toBe('loopback');
  });

  it('STAFF_SUDO_MINUTES: 10 by default, whole minutes 1..1440 (docs/security.md, Sudo mode)', () => {
    expect(validateEnv({}).STAFF_SUDO_MINUTES).toBe(10);
    expect(validateEnv({ STAFF_SUDO_MINUTES: '30' }).STAFF_SUDO_MINUTES).toBe(30);
    for (const bad of ['0', '-5', '1441', '2.5', 'ten']) expect(() => validateEnv({ STAFF_SUDO_MINUTES: bad })).toThrow(ConfigError);
  });

  it('treats empty strings as unset', () => {
    expect(validateEnv({ DATABASE_URL: '', API_KEY: ' ' }).DATABASE_URL).toBeUndefined();
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '3.5'],
    ['DATABASE_URL', 'mysql://x'],
    ['REDIS_URL', 'http://x'],
    ['API_KEY', 'short'],
    ['ADMIN_PASSWORD', 'short'],
    ['SESSION_SECRET', 'too-short'],
    ['KEYRING_SECRET', 'x'.repeat(31)],
    ['RATE_LIMIT_ACTIVATE', '0'],
    ['RATE_LIMIT_VALIDATE', '-5'],
    ['LAST_SEEN_INTERVAL', 'soon'],
    ['RATE_LIMIT_HEARTBEAT', '0'],
    ['SEAT_SWEEP_INTERVAL', '0'],
    ['SEAT_SWEEP_INTERVAL', '46'],
    ['LOG_LEVEL', 'loud'],
    ['TRUST_PROXY', 'everyone; rm -rf'],
    ['ADMIN_USERNAME', 'bad name!'],
    ['WEB_CONCURRENCY', '0'],
    ['WEB_CONCURRENCY', '65'],
    ['WEB_CONCURRENCY', '-1'],
    ['WEB_CONCURRENCY', '1.5'],
    ['WEB_CONCURRENCY', 'max'],
  ])('rejects %s=%s with a message naming the variable', (name, value) => {
    expect(() => validateEnv({ [name]: value })).toThrow(ConfigError);
    expect(() => validateEnv({ [name]: value })).toThrow(new RegExp(`Invalid environment variables:[\\s\\S]*${name}`));
  });

  it.each([
    'true',
    '0.0.0.0/0',
    '::/0',
    'loopback, 0.0.0.0/0',
    // Hop counts a client can outnumber with its own X-Forwarded-For entries
    '6',
    '99',
    '999',
    // Public address space: every client connecting from it could choose its IP
    '0.0.0.0/1,128.0.0.0/1',
    '0.0.0.0/1, 128.0.0.0/1',
    '8.0.0.0/8',
    '104.0.0.0/12',
    '2000::/3',
    '2001:db8::/28',
    'loopback, 10.0.0.0/8, 1.0.0.0/1',
    '0.0.0.0/8',
  ])('refuses TRUST_PROXY=%s, which would make every per-IP limit spoofable, pointing to a hop count or addresses', (value) => {
    expect(() => validateEnv({ TRUST_PROXY: value })).toThrow(ConfigError);
    expect(() => validateEnv({ TRUST_PROXY: value })).toThrow(/TRUST_PROXY=true .*every per-IP rate limit.*TRUST_PROXY=1.*loopback/);
  });

  it.each([
    '1',
    '2',
    '5',
    'false',
    'loopback',
    '10.0.0.0/8, 127.0.0.1',
    'uniquelocal',
    '::1/128',
    '172.16.0.0/12, 192.168.0.0/16',
    'fc00::/7',
    '100.64.0.0/10',
    // A proxy's own public address, or a CDN's published ranges (Cloudflare's widest are /13 and /29)
    '203.0.114.7',
    '104.16.0.0/13, 172.64.0.0/13, 2a06:98c0::/29',
  ])('accepts TRUST_PROXY=%s', (value) => {
    expect(validateEnv({ TRUST_PROXY: value }).TRUST_PROXY).toBe(value);
  });

  it('names every bad variable at once', () => {
    try {
      validateEnv({ PORT: 'x', LOG_LEVEL: 'y' });
      throw new Error('expected a ConfigError');
    } catch (err) {
      expect((err as Error).message).toMatch(/PORT/);
      expect((err as Error).message).toMatch(/LOG_LEVEL/);
    }
  });

  describe('WEB_CONCURRENCY', () => {
    it('defaults to one process', () => {
      expect(validateEnv({}).WEB_CONCURRENCY).toBeUndefined();
      expect(resolveWebConcurrency(validateEnv({}).WEB_CONCURRENCY)).toBe(1);
      expect(resolveWebConcurrency(validateEnv({ WEB_CONCURRENCY: ' ' }).WEB_CONCURRENCY)).toBe(1);
    });

    it.each([
      ['1', 1],
      ['2', 2],
      [' 8 ', 8],
      ['64', 64],
    ])('reads %s as %d workers', (value, workers) => {
      const parsed = validateEnv({ WEB_CONCURRENCY: value }).WEB_CONCURRENCY;
      expect(parsed).toBe(workers);
      expect(resolveWebConcurrency(parsed, 4)).toBe(workers);
    });

    it.each(['auto', 'AUTO', ' auto '])('reads %s as the number of cores, at most 64', (value) => {
      const parsed = validateEnv({ WEB_CONCURRENCY: value }).WEB_CONCURRENCY;
      expect(parsed).toBe('auto');
      expect(resolveWebConcurrency(parsed, 6)).toBe(6);
      expect(resolveWebConcurrency(parsed, 1)).toBe(1);
      expect(resolveWebConcurrency(parsed, 200)).toBe(MAX_WEB_CONCURRENCY);
    });

    it('explains the accepted values', () => {
      expect(() => validateEnv({ WEB_CONCURRENCY: '100' })).toThrow(
        /Invalid environment variables:\n {2}WEB_CONCURRENCY: WEB_CONCURRENCY must be auto or a whole number from 1 to 64/,
      );
    });
  });
});
