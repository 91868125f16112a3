import { buildLicensePayload } from './license-payload';

describe('buildLicensePayload', () => {
  const license = {
    licenseKey: 'POS-7K2QF-9XWMB-R4TZN-H8CVD',
    licenseType: 'YEARLY' as const,
    createdAt: new Date('2026-01-31T10:00:00.000Z'),
    expiresAt: new Date('2027-01-31T10:00:00.000Z'),
    graceDays: 7,
    limits: { max_operators: 8 },
    features: ['REPORTS', 'INVENTORY'],
    customerName: 'Acme d.o.o.',
    customerEmail: 'it@acme.example',
  };
  const product = { code: 'POS_RETAIL', defaultLimits: { max_installations: 1, max_operators: 5 } };
  const binding = { machineFingerprint: 'sha256:' + 'a'.repeat(64), activatedAt: new Date('2026-02-01T08:30:00.000Z') };

  it('builds the signed licence with merged limits, the creation time as issued_at and the key id', () => {
    expect(buildLicensePayload(license, product, binding, '0123456789abcdef', new Date('2026-02-01T08:30:01.000Z'))).toEqual({
      license_key: 'POS-7K2QF-9XWMB-R4TZN-H8CVD',
      product: 'POS_RETAIL',
      license_type: 'YEARLY',
      issued_at: '2026-01-31T10:00:00.000Z',
      expires_at: '2027-01-31T10:00:00.000Z',
      activated_at: '2026-02-01T08:30:00.000Z',
      machine_fingerprint: 'sha256:' + 'a'.repeat(64),
      grace_days: 7,
      limits: { max_installations: 1, max_operators: 8 },
      features: ['REPORTS', 'INVENTORY'],
      customer: { name: 'Acme d.o.o.', email: 'it@acme.example' },
      key_id: '0123456789abcdef',
      signed_at: '2026-02-01T08:30:01.000Z',
      policy: {
        heartbeat_timeout_seconds: null,
        max_deactivations_per_30_days: null,
        license_file_ttl_days: 30,
        max_uses: null,
        uses_period: 'none',
      },
    });
  });

  it("carries the licence's policy merged over the product's default_policy", () => {
    const payload = buildLicensePayload(
      { ...license, policy: { license_file_ttl_days: 7 } },
      { ...product, defaultPolicy: { heartbeat_timeout_seconds: 600, license_file_ttl_days: 14 } },
      binding,
      'k',
      new Date(),
    );
    expect(payload.policy).toEqual({
      heartbeat_timeout_seconds: 600,
      max_deactivations_per_30_days: null,
      license_file_ttl_days: 7,
      max_uses: null,
      uses_period: 'none',
    });
  });

  it('writes null for a missing e-mail and for a licence that never expires', () => {
    const payload = buildLicensePayload({ ...license, customerEmail: null, expiresAt: null }, product, binding, 'k', new Date());
    expect(payload.customer).toEqual({ name: 'Acme d.o.o.', email: null });
    expect(payload.expires_at).toBeNull();
  });

  it('does not share arrays or objects with the licence (the payload may be signed later)', () => {
    const payload = buildLicensePayload(license, product, binding, 'k', new Date());
    payload.features.push('X');
    payload.limits.max_operators = 1;
    expect(license.features).toEqual(['REPORTS', 'INVENTORY']);
    expect(license.limits).toEqual({ max_operators: 8 });
    expect(product.defaultLimits).toEqual({ max_installations: 1, max_operators: 5 });
  });

  it('is JSON-only: every timestamp is an ISO string with Z', () => {
    const payload = buildLicensePayload(license, product, binding, 'k', new Date());
    expect(JSON.parse(JSON.stringify(payload))).toEqual(payload);
    for (const t of [payload.issued_at, payload.expires_at, payload.activated_at])
      expect(t).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });
});
