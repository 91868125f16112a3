import { AppError } from '../../common/errors/app-error';
import { expiryUndoRefusal, type LicenseState, movedExpiry, suspendUndoRefusal } from './license-rules';

const DAY = 86_400_000;
const now = new Date('2026-11-28T12:00:00.000Z');
const licence = (over: Partial<LicenseState> = {}): LicenseState => ({
  licenseType: 'YEARLY',
  expiresAt: new Date('2027-01-10T08:00:00.000Z'),
  active: true,
  revoked: false,
  ...over,
});
const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err instanceof AppError ? `${err.status} ${err.message}` : String(err);
  }
  return null;
};

/** The rules a bulk change and its preview share (docs/dashboard.md, Bulk actions). */
describe('movedExpiry', () => {
  it('extends from the expiry while it is ahead, from now once it has passed', () => {
    expect(movedExpiry(licence(), { days: 30 }, now)).toEqual(new Date(Date.parse('2027-01-10T08:00:00.000Z') + 30 * DAY));
    expect(movedExpiry(licence({ expiresAt: new Date('2026-11-01T00:00:00.000Z') }), { days: 7 }, now)).toEqual(
      new Date(now.getTime() + 7 * DAY),
    );
  });

  it('renews by one term of the licence type, from the later of now and the expiry', () => {
    expect(movedExpiry(licence(), { renew: true }, now)).toEqual(new Date('2028-01-10T08:00:00.000Z'));
    expect(movedExpiry(licence({ licenseType: 'TRIAL', expiresAt: null }), { renew: true }, now)).toEqual(
      new Date(now.getTime() + 14 * DAY),
    );
  });

  it('refuses a PERPETUAL or a revoked licence with the reason a bulk change skips it with', () => {
    expect(refusal(() => movedExpiry(licence({ licenseType: 'PERPETUAL', expiresAt: null }), { days: 1 }, now))).toBe(
      '409 A PERPETUAL licence never expires: there is nothing to extend',
    );
    expect(refusal(() => movedExpiry(licence({ licenseType: 'PERPETUAL', expiresAt: null }), { renew: true }, now))).toBe(
      '409 A PERPETUAL licence never expires: there is nothing to renew',
    );
    expect(refusal(() => movedExpiry(licence({ revoked: true }), { days: 1 }, now))).toBe('409 A revoked licence cannot be extended');
    expect(refusal(() => movedExpiry(licence({ revoked: true }), { renew: true }, now))).toBe('409 A revoked licence cannot be renewed');
  });
});

describe('undo refusals', () => {
  const left = new Date('2027-01-10T08:00:00.000Z');

  it('moves an expiry back only while it is what the operation left, and not on a revoked licence', () => {
    expect(expiryUndoRefusal(licence(), left)).toBeNull();
    expect(expiryUndoRefusal(licence({ expiresAt: new Date('2027-02-01T09:30:00.000Z') }), left)).toBe(
      'Changed since the operation: it expires 2027-02-01 09:30 UTC, not 2027-01-10 08:00 UTC as the operation left it',
    );
    expect(expiryUndoRefusal(licence({ licenseType: 'PERPETUAL', expiresAt: null }), left)).toMatch(/it expires never, not/);
    expect(expiryUndoRefusal(licence({ revoked: true }), left)).toBe('Revoked since the operation: left as it is');
  });

  it('reinstates only a licence still suspended and not revoked', () => {
    expect(suspendUndoRefusal(licence({ active: false }))).toBeNull();
    expect(suspendUndoRefusal(licence())).toBe('Reinstated since the operation: nothing to undo');
    expect(suspendUndoRefusal(licence({ active: false, revoked: true }))).toBe('Revoked since the operation: left as it is');
  });
});
