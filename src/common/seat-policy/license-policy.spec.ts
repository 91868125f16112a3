import { DEFAULT_POLICY, licensePolicyOverrides, mergePolicy, policyProblem, productDefaultPolicy } from './license-policy';

describe('seat policy', () => {
  it('merges the licence over the product over the defaults', () => {
    expect(mergePolicy({}, {})).toEqual(DEFAULT_POLICY);
    expect(mergePolicy({ heartbeat_timeout_seconds: 600, license_file_ttl_days: 7 }, { license_file_ttl_days: 14 })).toEqual({
      heartbeat_timeout_seconds: 600,
      max_deactivations_per_30_days: null,
      license_file_ttl_days: 14,
      max_uses: null,
      uses_period: 'none',
    });
    // A product may say "never" explicitly; a licence without an override inherits it.
    expect(mergePolicy({ heartbeat_timeout_seconds: null }, { max_deactivations_per_30_days: 2 }).heartbeat_timeout_seconds).toBeNull();
  });

  it("drops null from a licence's overrides (null clears) but keeps it on a product (null is a value)", () => {
    expect(licensePolicyOverrides({ heartbeat_timeout_seconds: null, max_deactivations_per_30_days: 3 })).toEqual({
      max_deactivations_per_30_days: 3,
    });
    expect(productDefaultPolicy({ heartbeat_timeout_seconds: null, license_file_ttl_days: 10 })).toEqual({
      heartbeat_timeout_seconds: null,
      license_file_ttl_days: 10,
    });
  });

  it.each([
    [{ heartbeat_timeout_seconds: 10 }, true],
    [{ heartbeat_timeout_seconds: 604_800 }, true],
    [{ heartbeat_timeout_seconds: 9 }, false],
    [{ heartbeat_timeout_seconds: 604_801 }, false],
    [{ heartbeat_timeout_seconds: 60.5 }, false],
    [{ heartbeat_timeout_seconds: '60' }, false],
    [{ max_deactivations_per_30_days: 0 }, true],
    [{ max_deactivations_per_30_days: 1_000 }, true],
    [{ max_deactivations_per_30_days: 1_001 }, false],
    [{ max_deactivations_per_30_days: -1 }, false],
    [{ license_file_ttl_days: 1 }, true],
    [{ license_file_ttl_days: 365 }, true],
    [{ license_file_ttl_days: 0 }, false],
    [{ license_file_ttl_days: 366 }, false],
    [{ max_uses: 1 }, true],
    [{ max_uses: 1_000_000_000_000 }, true],
    [{ max_uses: null }, true],
    [{ max_uses: 0 }, false],
    [{ max_uses: 1_000_000_000_001 }, false],
    [{ max_uses: 1.5 }, false],
    [{ max_uses: '500' }, false],
    [{ uses_period: 'month' }, true],
    [{ uses_period: 'none' }, true],
    [{ uses_period: 'week' }, false],
    [{ uses_period: 'MONTH' }, false],
    [{ uses_period: 1 }, false],
    [{ uses_period: null }, false],
    [{ unknown_key: 1 }, false],
    [[], false],
    [null, false],
  ])('checks bounds and keys: %j -> %s', (value, ok) => {
    expect(policyProblem(value, false) === undefined).toBe(ok);
  });

  it('takes null for every key on a licence, but not for license_file_ttl_days on a product', () => {
    expect(policyProblem({ license_file_ttl_days: null }, true)).toBeUndefined();
    expect(policyProblem({ license_file_ttl_days: null }, false)).toMatch(/license_file_ttl_days/);
    expect(policyProblem({ heartbeat_timeout_seconds: null, max_deactivations_per_30_days: null }, false)).toBeUndefined();
  });
});
