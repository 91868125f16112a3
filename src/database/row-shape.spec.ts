import { jsonTime, plain, rowShape } from './row-shape';

class Thing {
  id: number;
  keyPrefix: string;
  size: number;
  createdAt: Date;
  endedAt: Date | null;
}

interface Claim {
  id: string;
  storedSecret: string;
  eventType: string;
}

describe('rowShape', () => {
  const things = rowShape(() => new Thing(), 'id, key_prefix,\n  size, created_at, ended_at', {
    convert: { size: (size: string) => Number(size) },
  });

  it('lists its columns for a select, plain or through a table alias', () => {
    expect(things.columns).toBe('id, key_prefix, size, created_at, ended_at');
    expect(things.columnsOf('t')).toBe('t.id, t.key_prefix, t.size, t.created_at, t.ended_at');
  });

  it('reads a row into its target: camelCase fields, converted where a converter says, null where the row lacks one', () => {
    const at = new Date('2026-01-02T03:04:05Z');
    const thing = things.fromRow({ id: 7, key_prefix: 'AB', size: '12', created_at: at, ended_at: null });
    expect(thing).toBeInstanceOf(Thing);
    expect({ ...thing }).toEqual({ id: 7, keyPrefix: 'AB', size: 12, createdAt: at, endedAt: null });
    const lacking = { id: 7, key_prefix: 'AB', size: '12', created_at: at } as Parameters<typeof things.fromRow>[0];
    expect(things.fromRow(lacking).endedAt).toBeNull();
  });

  it('passes null by its converter', () => {
    const times = rowShape(() => new Thing(), 'ended_at', { convert: { ended_at: jsonTime } });
    expect(times.fromRow({ ended_at: null }).endedAt).toBeNull();
    expect(times.fromRow({ ended_at: '2026-01-02T03:04:05Z' }).endedAt).toEqual(new Date('2026-01-02T03:04:05Z'));
  });

  it('names a joined table’s columns with a prefix and reads them back', () => {
    const joined = things.prefixed('p_');
    expect(joined.columnsOf('p')).toBe(
      'p.id AS p_id, p.key_prefix AS p_key_prefix, p.size AS p_size, p.created_at AS p_created_at, p.ended_at AS p_ended_at',
    );
    const at = new Date();
    expect({ ...joined.fromRow({ p_id: 1, p_key_prefix: 'X', p_size: '3', p_created_at: at, p_ended_at: null }) }).toEqual({
      id: 1,
      keyPrefix: 'X',
      size: 3,
      createdAt: at,
      endedAt: null,
    });
  });

  it('selects a computed column by its expression and fills a plain object in the list’s order', () => {
    const claims = rowShape(plain<Claim>(), 'id, stored_secret, event_type', {
      convert: { id: (id: string) => String(id) },
      expressions: { stored_secret: 'e.secret', event_type: 'ev.type' },
    });
    expect(claims.columnsOf('c')).toBe('c.id, e.secret AS stored_secret, ev.type AS event_type');
    const claim = claims.fromRow({ id: '9', stored_secret: 's', event_type: 'license.created' });
    expect(Object.keys(claim)).toEqual(['id', 'storedSecret', 'eventType']);
    expect(claim).toEqual({ id: '9', storedSecret: 's', eventType: 'license.created' });
  });
});
