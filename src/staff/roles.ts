/** The staff roles, most powerful first; each may do everything the ones after it may (docs/dashboard.md, Staff and roles). */
export const STAFF_ROLES = ['owner', 'admin', 'support', 'viewer'] as const;
export type StaffRole = (typeof STAFF_ROLES)[number];

export const isStaffRole = (value: unknown): value is StaffRole => (STAFF_ROLES as readonly unknown[]).includes(value);

/** Whether `role` may do what `needed` may. */
export const roleAtLeast = (role: StaffRole, needed: StaffRole): boolean => STAFF_ROLES.indexOf(role) <= STAFF_ROLES.indexOf(needed);

/** What each role may do, in words, for the Staff page and the docs' table (docs/dashboard.md, Staff and roles). */
export const ROLE_DESCRIPTIONS: Readonly<Record<StaffRole, string>> = {
  owner: 'Everything, including staff accounts, roles and security settings.',
  admin: 'Everything but staff accounts: revoke, products, stores, webhooks, tokens, signing keys, releases.',
  support: 'Create and change licences (edit, renew, extend, suspend, reinstate, release seats, resend mail, notes, bulk changes).',
  viewer: 'Read only: licences, customers, audit, statistics, stores, mail.',
};
