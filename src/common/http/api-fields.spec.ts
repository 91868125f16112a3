import { type SnakeCase } from '../names';
import { apiFields, apiTimes } from './api-fields';

describe('api fields', () => {
  const key = {
    keyId: 'k1',
    publicKeyPem: 'PEM',
    sha256: 'ab',
    status: 'active' as const,
    createdAt: new Date('2026-01-31T10:00:00Z'),
    retiredAt: null as Date | null,
    revokedAt: undefined as Date | null | undefined,
  };

  it('copies the named fields under their snake_case names, in the order given', () => {
    const fields = apiFields(key, 'publicKeyPem', 'keyId', 'sha256', 'status');
    expect(Object.entries(fields)).toEqual([
      ['public_key_pem', 'PEM'],
      ['key_id', 'k1'],
      ['sha256', 'ab'],
      ['status', 'active'],
    ]);
    const typed: { key_id: string; status: 'active' } = fields;
    expect(typed.key_id).toBe('k1');
  });

  it('writes timestamps as ISO strings, and null for a null or unset one', () => {
    const times: { created_at: string; retired_at: string | null; revoked_at: string | null } = apiTimes(
      key,
      'createdAt',
      'retiredAt',
      'revokedAt',
    );
    expect(times).toEqual({ created_at: '2026-01-31T10:00:00.000Z', retired_at: null, revoked_at: null });
    expect(Object.keys(times)).toEqual(['created_at', 'retired_at', 'revoked_at']);
  });

  it('spells names as the runtime does', () => {
    const name: SnakeCase<'lastStatusCode'> = 'last_status_code';
    expect(Object.keys(apiFields({ lastStatusCode: 1 }, 'lastStatusCode'))).toEqual([name]);
  });
});
