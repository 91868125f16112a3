import { claimAt, roleFromClaim } from './roles-from-claim';

describe('roleFromClaim (docs/dashboard.md, Single sign-on)', () => {
  it('takes a single role name or the most powerful known role of a list', () => {
    expect(roleFromClaim('support')).toBe('support');
    expect(roleFromClaim(['viewer', 'admin', 'rocket-scientist'])).toBe('admin');
    expect(roleFromClaim(['Viewer', ' OWNER '])).toBe('owner');
  });

  it('ignores unknown names and non-strings; then OIDC_DEFAULT_ROLE, else no access', () => {
    expect(roleFromClaim(['superuser', 'root'])).toBeNull();
    expect(roleFromClaim([{ role: 'owner' }, 7, null])).toBeNull();
    expect(roleFromClaim(undefined)).toBeNull();
    expect(roleFromClaim('owner-ish', 'viewer')).toBe('viewer');
    expect(roleFromClaim(undefined, 'support')).toBe('support');
  });

  it('reads a claim by name or by a dotted path, never from the prototype', () => {
    expect(claimAt({ roles: ['x'] }, 'roles')).toEqual(['x']);
    expect(claimAt({ realm_access: { roles: ['admin'] } }, 'realm_access.roles')).toEqual(['admin']);
    expect(claimAt({ 'https://example.com/roles': 'admin' }, 'https://example.com/roles')).toBe('admin');
    expect(claimAt({}, 'constructor')).toBeUndefined();
    expect(claimAt({ a: 1 }, 'a.b')).toBeUndefined();
  });
});
