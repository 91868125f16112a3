/** The staff roles, most powerful first (docs/dashboard.md, Staff and roles). */
export const STAFF_ROLES = ['owner', 'admin', 'support', 'viewer'] as const;
export type StaffRole = (typeof STAFF_ROLES)[number];
