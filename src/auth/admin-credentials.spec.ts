import { satisfies } from './admin-credentials';
import { ADMIN_SCOPES, FULL_ACCESS } from './scopes';

describe('satisfies (scope check)', () => {
  const key = { actorName: 'key:0', scopes: ADMIN_SCOPES, products: null };
  it('an API key passes every scope and full access', () => {
    for (const scope of [...ADMIN_SCOPES, FULL_ACCESS] as const) expect(satisfies(key, scope)).toBe(true);
  });

  it('a token passes exactly its scopes', () => {
    const token = { actorName: 'token:t', scopes: ['licenses:read' as const], products: null };
    expect(ADMIN_SCOPES.filter((s) => satisfies(token, s))).toEqual(['licenses:read']);
    expect(satisfies(token, FULL_ACCESS)).toBe(false);
  });

  it('full access needs every product too', () => {
    expect(satisfies({ ...key, products: ['POS_RETAIL'] }, FULL_ACCESS)).toBe(false);
    expect(satisfies({ ...key, products: ['POS_RETAIL'] }, 'stats:read')).toBe(true);
  });
});
