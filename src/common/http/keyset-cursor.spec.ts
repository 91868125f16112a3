import { decodeCursor, encodeCursor, MAX_CURSOR_LENGTH } from './keyset-cursor';

const b64 = (text: string) => Buffer.from(text, 'latin1').toString('base64url');
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** 31 bytes: the last character carries 2 bits of data and 4 unused bits, here set (Node would decode it all the same). */
const nonCanonical = (() => {
  const canonical = b64('2026-03-01T10:11:12.123456Z,421');
  return canonical.slice(0, -1) + ALPHABET[ALPHABET.indexOf(canonical.slice(-1)) | 1];
})();

describe('keyset cursor', () => {
  it('round-trips a position, microseconds and a bigint id included', () => {
    for (const position of [
      { createdAt: '2026-03-01T10:11:12.123456Z', id: '42' },
      { createdAt: '0001-01-01T00:00:00.000000Z', id: '1' },
      { createdAt: '9999-12-31T23:59:59.999999Z', id: '9223372036854775807' },
      { createdAt: '2024-02-29T00:00:00.000001Z', id: '2147483648' },
    ]) {
      const cursor = encodeCursor(position);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(cursor.length).toBeLessThanOrEqual(MAX_CURSOR_LENGTH);
      expect(decodeCursor(cursor)).toEqual(position);
    }
  });

  it('the non-canonical case differs only in unused bits', () => {
    expect(Buffer.from(nonCanonical, 'base64url').toString('latin1')).toBe('2026-03-01T10:11:12.123456Z,421');
  });

  it.each([
    ['not a string', 42],
    ['empty', ''],
    ['padding', `${b64('2026-03-01T10:11:12.123456Z,4')}=`],
    ['standard base64 alphabet', '+/+/'],
    ['non-canonical unused bits', nonCanonical],
    ['over-long', 'A'.repeat(MAX_CURSOR_LENGTH + 4)],
    ['another structure (JSON)', b64('{"created_at":"2026-03-01T10:11:12.123456Z","id":42}')],
    ['no id', b64('2026-03-01T10:11:12.123456Z')],
    ['two ids', b64('2026-03-01T10:11:12.123456Z,1,2')],
    ['milliseconds only', b64('2026-03-01T10:11:12.123Z,42')],
    ['another zone', b64('2026-03-01T10:11:12.123456+01:00,42')],
    ['id zero', b64('2026-03-01T10:11:12.123456Z,0')],
    ['negative id', b64('2026-03-01T10:11:12.123456Z,-1')],
    ['id with a leading zero', b64('2026-03-01T10:11:12.123456Z,042')],
    ['id not a number', b64('2026-03-01T10:11:12.123456Z,abc')],
    ['id beyond bigint', b64('2026-03-01T10:11:12.123456Z,9223372036854775808')],
    ['month 13', b64('2026-13-01T10:11:12.123456Z,42')],
    ['February 30', b64('2026-02-30T10:11:12.123456Z,42')],
    ['hour 24', b64('2026-03-01T24:00:00.000000Z,42')],
    ['year 0', b64('0000-12-31T00:00:00.000000Z,42')],
    ['five-digit year', b64('99999-01-01T00:00:00.000000Z,42')],
    ['infinity', b64('infinity,42')],
    ['binary', Buffer.from([0, 255, 10, 13, 44]).toString('base64url')],
  ])('rejects %s', (_label, cursor) => {
    expect(decodeCursor(cursor)).toBeUndefined();
  });
});
