import { isStaffRole, roleAtLeast, STAFF_ROLES } from './roles';

describe('staff roles', () => {
  it('nest: each role may do what every role after it may, and nothing before it', () => {
    expect(roleAtLeast('owner', 'viewer')).toBe(true);
    expect(roleAtLeast('admin', 'admin')).toBe(true);
    expect(roleAtLeast('admin', 'owner')).toBe(false);
    expect(roleAtLeast('support', 'admin')).toBe(false);
    expect(roleAtLeast('viewer', 'support')).toBe(false);
    for (const [i, role] of STAFF_ROLES.entries())
      for (const [j, needed] of STAFF_ROLES.entries()) expect(roleAtLeast(role, needed)).toBe(i <= j);
  });

  it('knows its names only', () => {
    expect(isStaffRole('viewer')).toBe(true);
    expect(isStaffRole('root')).toBe(false);
    expect(isStaffRole('OWNER')).toBe(false);
  });
});
