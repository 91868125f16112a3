import type { PendingEvent } from '../webhooks/event-fanout.service';
import { mailFromEvents, validRecipient } from './mail-derivation';

let n = 0;
function event(type: string, data: Record<string, unknown>, actorType = 'admin_api', details: Record<string, unknown> = {}): PendingEvent {
  n += 1;
  const license = {
    id: 7,
    license_key: 'POS-1',
    customer_name: 'Mika',
    customer_email: 'mika@shop.example',
    expires_at: '2027-01-31T10:00:00.000Z',
    product: { code: 'POS_RETAIL', name: 'Retail' },
  };
  return {
    id: `msg_${n}`,
    type,
    productId: 1,
    createdAt: new Date(),
    payload: { type, timestamp: '', data: { ...license, ...data, event: { actor_type: actorType, actor: 'x', details } } },
  };
}

// docs/mail.md, When mail is sent.
describe('mailFromEvents', () => {
  it('license_issued only with notify_customer or from a store', () => {
    expect(mailFromEvents([event('license.created', {})], [])).toEqual([]);
    const asked = mailFromEvents([event('license.created', {}, 'admin_api', { notify_customer: true })], []);
    expect(asked).toEqual([expect.objectContaining({ kind: 'license_issued', toAddress: 'mika@shop.example', status: 'pending' })]);
    expect(asked[0].dedupeKey).toBe(`license_issued:${asked[0].eventId}`);
    expect(mailFromEvents([event('license.created', {}, 'store')], [])).toEqual([expect.objectContaining({ kind: 'license_issued' })]);
  });

  it("the key mail of a store-made licence keeps the store's name (for its customer portal link); other kinds and staff licences do not", () => {
    const store = { name: 'stripe', subscription_active: true };
    expect(mailFromEvents([event('license.created', { store }, 'store')], [])[0].data).toEqual(
      expect.objectContaining({ store_name: 'stripe' }),
    );
    const staff = mailFromEvents([event('license.created', { store: null }, 'admin_api', { notify_customer: true })], []);
    expect(staff[0].data).not.toHaveProperty('store_name');
    const released = mailFromEvents([event('license.released', { store }, 'admin_api', { released: 1 })], []);
    expect(released[0].data).not.toHaveProperty('store_name');
  });

  it('"send the key again" (license.key_resent): license_issued once per event, so each request is its own message', () => {
    const [a] = mailFromEvents([event('license.key_resent', {}, 'dashboard')], []);
    const [b] = mailFromEvents([event('license.key_resent', {}, 'dashboard')], []);
    expect(a).toEqual(expect.objectContaining({ kind: 'license_issued', toAddress: 'mika@shop.example' }));
    expect(b.dedupeKey).not.toBe(a.dedupeKey);
    expect(mailFromEvents([event('license.key_resent', {}, 'dashboard')], ['license_issued'])).toEqual([]);
  });

  it('reminders: one key per licence and expiry date, so a second event for the same date adds nothing', () => {
    const [a] = mailFromEvents([event('license.expiring_soon', {}, 'system')], []);
    const [b] = mailFromEvents([event('license.expiring_soon', {}, 'system')], []);
    expect(a.dedupeKey).toBe('expiring_soon:7:2027-01-31T10:00:00.000Z');
    expect(b.dedupeKey).toBe(a.dedupeKey);
    const [renewed] = mailFromEvents([event('license.expiring_soon', { expires_at: '2028-01-31T10:00:00.000Z' }, 'system')], []);
    expect(renewed.dedupeKey).not.toBe(a.dedupeKey);
  });

  it('no reminder while a store subscription is active; none for disabled kinds; none without an address', () => {
    expect(mailFromEvents([event('license.expired', { store: { subscription_active: true } }, 'system')], [])).toEqual([]);
    expect(mailFromEvents([event('license.expired', {}, 'system')], ['expired'])).toEqual([]);
    expect(mailFromEvents([event('license.expired', { customer_email: null }, 'system')], [])).toEqual([]);
  });

  it('seat_released for staff and heartbeat releases, not for a customer releasing their own seat', () => {
    const [staff] = mailFromEvents([event('license.released', {}, 'dashboard', { released: 2, reason: null })], []);
    expect(staff).toEqual(expect.objectContaining({ kind: 'seat_released', data: expect.objectContaining({ released: 2 }) }));
    expect(mailFromEvents([event('license.released', {}, 'system', { released: 1, reason: 'heartbeat_timeout' })], [])).toHaveLength(1);
    expect(mailFromEvents([event('license.released', {}, 'customer')], [])).toEqual([]);
    expect(mailFromEvents([event('license.deactivated', {}, 'client')], [])).toEqual([]);
  });

  it('attacker: an address with a line break or a second mailbox is failed at once, never pending', () => {
    for (const address of ['a@b.example\r\nBcc: c@d.example', 'a@b.example, c@d.example', 'A <a@b.example>', 'no-at-sign']) {
      expect(validRecipient(address)).toBe(false);
      const [mail] = mailFromEvents([event('license.expired', { customer_email: address }, 'system')], []);
      expect(mail).toEqual(expect.objectContaining({ status: 'failed', lastError: 'invalid recipient address: not sent' }));
    }
    expect(validRecipient('đorđe@primer.rs')).toBe(true);
  });
});
