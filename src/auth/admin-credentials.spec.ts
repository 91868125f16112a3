import { satisfies } from './admin-credentials';
import { ADMIN_SCOPES, FULL_ACCESS, GLOBAL_SCOPES } from '../common/auth/scopes';

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
    expect(satisfies({ ...key, products: [1] }, FULL_ACCESS)).toBe(false);
    expect(satisfies({ ...key, products: [1] }, 'stats:read')).toBe(true);
  });

  it('a global scope needs every product: a limited token holding it does not pass (attacker: limited signing-keys:manage)', () => {
    expect(GLOBAL_SCOPES).toContain('signing-keys:manage');
    for (const scope of GLOBAL_SCOPES) {
      expect(satisfies({ scopes: [scope], products: null }, scope)).toBe(true);
      expect(satisfies({ scopes: [scope], products: [1] }, scope)).toBe(false);
      expect(satisfies({ scopes: [scope], products: [] }, scope)).toBe(false);
    }
    expect(satisfies({ scopes: ['licenses:read'], products: [1] }, 'licenses:read')).toBe(true);
  });
});
