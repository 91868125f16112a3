import { auditDetailLines, customerQuery, displayIp, shortFingerprint } from './display';

describe('dashboard display rules', () => {
  const fp = 'sha256:' + '4f2a9c'.repeat(10) + 'd81e';

  it('shows IPv4-mapped IPv6 addresses as IPv4 and leaves others alone', () => {
    expect(displayIp('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(displayIp('::FFFF:203.0.113.7')).toBe('203.0.113.7');
    expect(displayIp('2001:db8::1')).toBe('2001:db8::1');
    expect(displayIp(null)).toBe('');
  });

  it('reads a change as "old → new" with dates as days and the exact values on hover', () => {
    const lines = auditDetailLines({
      changes: {
        expires_at: { from: '2026-12-01T10:00:00.000Z', to: '2027-12-01T10:00:00.000Z' },
        limits: { from: {}, to: { max_installations: 3 } },
        customer_email: { from: null, to: 'a@example.rs' },
      },
      reason: 'Paid for another year',
    });
    expect(lines).toEqual([
      { name: 'expires_at', value: '2026-12-01 → 2027-12-01', title: '2026-12-01 10:00 UTC → 2027-12-01 10:00 UTC' },
      { name: 'limits', value: 'none → max_installations 3', title: undefined },
      { name: 'customer_email', value: '— → a@example.rs', title: undefined },
      { name: 'reason', value: 'Paid for another year' },
    ]);
  });

  it('shortens fingerprints, keeping the full value for the title', () => {
    expect(auditDetailLines({ machine_fingerprints: [fp], released: 1 })).toEqual([
      { name: 'machine fingerprints', value: String(shortFingerprint(fp)), title: fp },
      { name: 'released', value: '1' },
    ]);
    expect(String(shortFingerprint(fp))).toMatch(/^sha256:4f2a9c…[0-9a-f]{6}$/);
  });

  it('links a customer by e-mail, else PIB, else name', () => {
    expect(customerQuery({ customer_email: 'a+b@example.rs', customer_pib: '101134702' })).toBe('email=a%2Bb%40example.rs');
    expect(customerQuery({ customer_email: null, customer_pib: '101134702' })).toBe('pib=101134702');
    expect(customerQuery({ customer_name: 'Kod Mike' })).toBe('name=Kod+Mike');
  });
});
