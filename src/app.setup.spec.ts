import { trustProxyValue } from './app.setup';
import { ConfigError } from './config/config.error';

describe('trustProxyValue (Express trust proxy from TRUST_PROXY)', () => {
  it.each([
    [undefined, false],
    ['false', false],
    ['1', 1],
    ['2', 2],
    ['loopback', 'loopback'],
    ['10.0.0.0/8, 127.0.0.1', '10.0.0.0/8, 127.0.0.1'],
  ])('%s -> %p', (value, expected) => expect(trustProxyValue(value)).toBe(expected));

  // Also refused when a config is built in code (tests, scripts), not only from the environment.
  it.each(['true', '0.0.0.0/0', '::/0', '999', '0.0.0.0/1,128.0.0.0/1'])('refuses %s: every client could choose its own IP', (value) => {
    expect(() => trustProxyValue(value)).toThrow(ConfigError);
    expect(() => trustProxyValue(value)).toThrow(/hop count|number of proxies/);
  });
});
