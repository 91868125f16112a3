import { ConfigError } from './config.error';
import { validateEnv } from './env.schema';

describe('validateEnv', () => {
  it('applies the CONTRACT defaults to an empty environment', () => {
    const env = validateEnv({});
    expect(env).toMatchObject({
      PORT: 3000,
      DATA_DIR: './data',
      ADMIN_USERNAME: 'admin',
      RATE_LIMIT_ACTIVATE: 10,
      RATE_LIMIT_DEACTIVATE: 10,
      RATE_LIMIT_VALIDATE: 60,
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
    ['RATE_LIMIT_ACTIVATE', '0'],
    ['RATE_LIMIT_VALIDATE', '-5'],
    ['LAST_SEEN_INTERVAL', 'soon'],
    ['RATE_LIMIT_HEARTBEAT', '0'],
    ['SEAT_SWEEP_INTERVAL', '0'],
    ['SEAT_SWEEP_INTERVAL', '46'],
    ['LOG_LEVEL', 'loud'],
    ['TRUST_PROXY', 'everyone; rm -rf'],
    ['ADMIN_USERNAME', 'bad name!'],
  ])('rejects %s=%s with a message naming the variable', (name, value) => {
    expect(() => validateEnv({ [name]: value })).toThrow(ConfigError);
    expect(() => validateEnv({ [name]: value })).toThrow(new RegExp(`Invalid environment variables:[\\s\\S]*${name}`));
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
});
