import crypto, { createHmac } from 'node:crypto';
import { AppError } from '../common/errors/app-error';
import { hmacMatches, hmacMatchesAny, isoTime, parseSignedJson, storeId } from './store-signature';

/** The pure rules under the Paddle and Lemon Squeezy signature checks (docs/stores.md, Signatures). */
describe('store signatures', () => {
  const body = Buffer.from('{"a":1}');
  const hex = createHmac('sha256', 'secret').update(body).digest('hex');

  it('matches the hex HMAC-SHA256, in either case, and nothing else', () => {
    expect(hmacMatches('secret', body, hex)).toBe(true);
    expect(hmacMatches('secret', body, hex.toUpperCase())).toBe(true);
    expect(hmacMatches('other', body, hex)).toBe(false);
    expect(hmacMatches('secret', Buffer.from('{"a":2}'), hex)).toBe(false);
  });

  it('refuses, without throwing, a signature that is not hex or has another length', () => {
    expect(hmacMatches('secret', body, hex.slice(2))).toBe(false);
    expect(hmacMatches('secret', body, `${hex}00`)).toBe(false);
    expect(hmacMatches('secret', body, 'z'.repeat(64))).toBe(false);
    expect(hmacMatches('secret', body, '')).toBe(false);
  });

  it('computes one HMAC whatever the number of candidates, and none when no candidate has the shape of one', () => {
    const spy = jest.spyOn(crypto, 'createHmac');
    try {
      expect(hmacMatchesAny('secret', [body], Array<string>(3000).fill('0'))).toBe(false);
      expect(spy).not.toHaveBeenCalled();
      expect(hmacMatchesAny('secret', [body], ['a'.repeat(64), 'b'.repeat(64), hex])).toBe(true);
      expect(spy).toHaveBeenCalledTimes(1);
      // The message may come in parts (Paddle signs `ts:` and the body): the same HMAC as over the whole.
      const parts = createHmac('sha256', 'secret').update('12:').update(body).digest('hex');
      expect(hmacMatchesAny('secret', [Buffer.from('12:'), body], [parts])).toBe(true);
    } finally {
      spy.mockRestore();
    }
  });

  it('a signed body that is not JSON, or holds a NUL, is a 400 on the body', () => {
    const code = (raw: string) => {
      try {
        parseSignedJson(Buffer.from(raw));
        return 'parsed';
      } catch (err) {
        return err instanceof AppError ? `${err.status} ${err.code}` : 'other';
      }
    };
    expect(code('{')).toBe('400 VALIDATION_ERROR');
    expect(code('{"name":"a\\u0000b"}')).toBe('400 VALIDATION_ERROR');
    expect(code('{"ok":true}')).toBe('parsed');
  });

  it('keeps ids the ledger can hold: strings up to 255 characters and whole numbers', () => {
    expect(storeId('sub_1')).toBe('sub_1');
    expect(storeId(12345)).toBe('12345');
    expect(storeId('x'.repeat(256))).toBeNull();
    expect(storeId('')).toBeNull();
    expect(storeId(1.5)).toBeNull();
    expect(storeId({ id: 'x' })).toBeNull();
  });

  it('reads ISO times PostgreSQL can store, and nothing else', () => {
    expect(isoTime('2026-11-26T07:00:00Z')?.toISOString()).toBe('2026-11-26T07:00:00.000Z');
    expect(isoTime('yesterday')).toBeNull();
    expect(isoTime('+275760-09-13T00:00:00Z')).toBeNull();
    expect(isoTime(1_700_000_000)).toBeNull();
  });
});
