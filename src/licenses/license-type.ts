export const LICENSE_TYPES = ['TRIAL', 'MONTHLY', 'QUARTERLY', 'YEARLY', 'PERPETUAL'] as const;
export type LicenseType = (typeof LICENSE_TYPES)[number];
