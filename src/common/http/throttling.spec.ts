import { FixedWindowMemoryStorage, clientIp, rateLimitOptions } from './throttling';
import { testConfigFor } from '../../../test/support/unit-config';

describe('FixedWindowMemoryStorage', () => {
  let now = 1_000_000;
  const storage = () => new FixedWindowMemoryStorage(() => now);

  it('allows `limit` hits per window, blocks after, and resets when the window ends (not hit by hit)', async () => {
    const s = storage();
    now = 1_000_000;
    for (let i = 1; i <= 3; i++)
      expect(await s.increment('k', 60_000, 3, 1, 'x')).toMatchObject({ totalHits: i, isBlocked: false, timeToExpire: 60 });
    now += 30_000;
    expect(await s.increment('k', 60_000, 3, 1, 'x')).toEqual({ totalHits: 4, isBlocked: true, timeToExpire: 30, timeToBlockExpire: 30 });
    now += 29_999;
    expect((await s.increment('k', 60_000, 3, 1, 'x')).isBlocked).toBe(true);
    now += 1;
    // Fixed window: all earlier hits are gone at once when the window resets.
    expect(await s.increment('k', 60_000, 3, 1, 'x')).toMatchObject({ totalHits: 1, isBlocked: false, timeToExpire: 60 });
  });

  it('keeps keys apart', async () => {
    const s = storage();
    expect((await s.increment('a', 60_000, 1, 1, 'x')).isBlocked).toBe(false);
    expect((await s.increment('b', 60_000, 1, 1, 'x')).isBlocked).toBe(false);
    expect((await s.increment('a', 60_000, 1, 1, 'x')).isBlocked).toBe(true);
  });

  it('forgets ended windows, so memory follows the active clients', async () => {
    const s = storage();
    for (let i = 0; i < 100; i++) await s.increment(`ip-${i}`, 60_000, 10, 1, 'x');
    expect(s.size).toBe(100);
    now += 120_000;
    await s.increment('fresh', 60_000, 10, 1, 'x');
    expect(s.size).toBe(1);
  });

  it('never reports less than one second to wait', async () => {
    const s = storage();
    await s.increment('k', 60_000, 0, 1, 'x');
    now += 59_999;
    expect(await s.increment('k', 60_000, 0, 1, 'x')).toMatchObject({ isBlocked: true, timeToExpire: 1 });
  });
});

describe('rateLimitOptions', () => {
  it('has one 60 s throttler per name with the configured limit', () => {
    const options = rateLimitOptions(
      testConfigFor({ rateLimits: { activate: 1, deactivate: 2, validate: 3, heartbeat: 7, admin: 4, login: 5, loginPage: 6, stores: 8 } }),
    );
    const throttlers = Array.isArray(options) ? options : options.throttlers;
    expect(throttlers.map((t) => [t.name, t.limit, t.ttl])).toEqual([
      ['activate', 1, 60_000],
      ['deactivate', 2, 60_000],
      ['validate', 3, 60_000],
      ['heartbeat', 7, 60_000],
      ['admin', 4, 60_000],
      ['login', 5, 60_000],
      ['loginPage', 6, 60_000],
      ['stores', 8, 60_000],
    ]);
  });

  it('limits GET /login to 30 per minute when a config built in code leaves it out', () => {
    const options = rateLimitOptions(
      testConfigFor({ rateLimits: { activate: 1, deactivate: 2, validate: 3, heartbeat: 60, admin: 4, login: 5 } }),
    );
    const throttlers = Array.isArray(options) ? options : options.throttlers;
    expect(throttlers.find((t) => t.name === 'loginPage')?.limit).toBe(30);
  });

  it('limits the store event routes to 600 per minute when a config built in code leaves RATE_LIMIT_STORES out', () => {
    const options = rateLimitOptions(
      testConfigFor({ rateLimits: { activate: 1, deactivate: 2, validate: 3, heartbeat: 60, admin: 4, login: 5 } }),
    );
    const throttlers = Array.isArray(options) ? options : options.throttlers;
    expect(throttlers.find((t) => t.name === 'stores')?.limit).toBe(600);
  });
});

describe('clientIp', () => {
  it('uses req.ip (which honours trust proxy), groups IPv6 by /64 and unwraps IPv4-mapped addresses', () => {
    expect(clientIp({ ip: '203.0.113.7' })).toBe('203.0.113.7');
    expect(clientIp({ ip: '::ffff:203.0.113.7' })).toBe('203.0.113.7');
    expect(clientIp({ ip: '2001:db8:1:2:aaaa::1' })).toBe(clientIp({ ip: '2001:db8:1:2:bbbb::2' }));
    expect(clientIp({ socket: { remoteAddress: '198.51.100.1' } })).toBe('198.51.100.1');
  });
});
