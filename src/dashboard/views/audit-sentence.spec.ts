import { auditActor, type AuditEntryLike, auditSentence } from './audit-sentence';

const KEY = 'POS-7K3Q-M2XD-9PLA';
const staff = (action: string, details: Record<string, unknown> = {}, actor = 'helpdesk-ana'): AuditEntryLike => ({
  action,
  actor_type: 'dashboard',
  actor,
  license_id: 42,
  details,
  license: { license_key: KEY },
});
const client = (action: string, details: Record<string, unknown>): AuditEntryLike => ({
  action,
  actor_type: 'client',
  actor: '203.0.113.7',
  ip: '203.0.113.7',
  license_id: 42,
  details,
  license: { license_key: KEY },
});
const FP = `sha256:${'4f2a9c'.padEnd(64, '0')}`;

describe('auditSentence', () => {
  it.each<[string, AuditEntryLike, string]>([
    ['a suspension with its reason', staff('license.updated', { changes: { active: { from: true, to: false } }, reason: 'Invoice unpaid' }), `helpdesk-ana suspended ${KEY} — Invoice unpaid`],
    ['a reinstatement', staff('license.updated', { changes: { active: { from: false, to: true } } }), `helpdesk-ana reinstated ${KEY}`],
    ['a renewal', staff('license.updated', { renewed: true, changes: { expires_at: { from: '2026-12-01T23:59:59Z', to: '2027-12-01T23:59:59Z' } } }), `helpdesk-ana renewed ${KEY} until 2027-12-01`],
    ['an edit, by the form labels', staff('license.updated', { changes: { customer_email: { from: 'a@b.rs', to: 'c@d.rs' }, grace_days: { from: 7, to: 14 } } }), `helpdesk-ana changed ${KEY}: customer e-mail, grace days`],
    ['a revocation', staff('license.revoked', { reason: 'Chargeback' }), `helpdesk-ana revoked ${KEY} — Chargeback`],
    ['a staff member named by the account (actor staff:<username>)', staff('license.revoked', {}, 'staff:helpdesk-ana'), `helpdesk-ana revoked ${KEY}`],
    ['a role change with products', staff('staff.role_changed', { username: 'sam', to: { role: 'support', products: ['POS_RETAIL'] } }, 'staff:boss'), 'boss made sam support for POS_RETAIL'],
    ['an invitation', staff('staff.invited', { username: 'nina', role: 'viewer' }, 'staff:boss'), 'boss invited nina as viewer'],
    ['a creation by a token', { ...staff('license.created'), actor_type: 'admin_api', actor: 'token:webshop' }, `token:webshop created ${KEY}`],
    ['a release by staff', staff('license.released', { released: 2, reason: 'Shop closed' }), `helpdesk-ana released 2 machines of ${KEY} — Shop closed`],
    ['a release by the server, its reason in words', { ...staff('license.released', { released: 1, reason: 'heartbeat_timeout' }), actor_type: 'system', actor: null }, `The server released 1 machine of ${KEY} — no heartbeat within the timeout`],
    ['an activation: the host name is the actor', client('license.activated', { hostname: 'till-01', machine_fingerprint: FP }), `Machine till-01 activated ${KEY}`],
    ['a reactivation', client('license.activated', { hostname: 'till-01', reactivation: true }), `Machine till-01 activated again ${KEY}`],
    ['a denial with its code', client('license.activation_denied', { hostname: 'till-02', code: 'ALREADY_ACTIVATED' }), `Machine till-02 was refused ${KEY} (ALREADY_ACTIVATED)`],
    ['a deactivation without a host name: the short fingerprint', client('license.deactivated', { machine_fingerprint: FP }), `Machine sha256:4f2a9c…000000 gave back its seat of ${KEY}`],
    ['a licence file from the dashboard', staff('license.file_issued', { hostname: 'mine-scada-1' }), `helpdesk-ana issued a licence file of ${KEY} for mine-scada-1`],
    ['a licence without its key loaded', { ...staff('license.revoked'), license: undefined }, 'helpdesk-ana revoked licence #42'],
    ['a sign-in', { action: 'auth.login', actor_type: 'dashboard', actor: 'admin', details: {} }, 'admin signed in'],
    [
      'a note about a customer',
      { action: 'customer.note_added', actor_type: 'dashboard', actor: 'ana', details: { customer: 'email:kasa@zeljo.example', note: 'x' } },
      'ana wrote a note about the customer kasa@zeljo.example',
    ],
    ['a token issued', { action: 'token.created', actor_type: 'dashboard', actor: 'admin', details: { token_id: 3, name: 'webshop' } }, 'admin issued the admin token webshop'],
    ['a key rotation', { action: 'signing_key.rotated', actor_type: 'dashboard', actor: 'admin', details: { key_id: 'ab12cd34ef56ab78' } }, 'admin rotated the signing key (new key ab12cd34ef56ab78)'],
    ['a webhook deactivated', { action: 'webhook.updated', actor_type: 'dashboard', actor: 'admin', details: { webhook_id: 5, changes: { active: { from: true, to: false } } } }, 'admin deactivated webhook endpoint #5'],
    ['an unknown action stays its code', { action: 'store.opened', actor_type: 'dashboard', actor: 'admin', details: {} }, 'admin store.opened'],
  ])('%s', (_name, entry, sentence) => {
    expect(auditSentence(entry)).toBe(sentence);
  });

  // The attacker is a client that chooses its own host name.
  it('never lets a client host name pose as a staff member or span lines', () => {
    expect(auditActor(client('license.activated', { hostname: 'helpdesk-ana' }))).toBe('Machine helpdesk-ana');
    const long = auditSentence(client('license.activated', { hostname: `evil\n\nadmin revoked everything ${'x'.repeat(200)}` }));
    expect(long).not.toContain('\n');
    expect(long.startsWith('Machine evil admin revoked everything ')).toBe(true);
    expect(long.length).toBeLessThan(64 + 'Machine  activated '.length + KEY.length + 1);
  });

  it('does not take the IP of a client as its name, and ignores a host name that is not text', () => {
    expect(auditActor(client('license.activated', { hostname: 42 }))).toBe('A client');
    expect(auditActor({ action: 'license.activated', actor_type: 'client', actor: '203.0.113.7', details: null })).toBe('A client');
  });
});
