import { createPublicKey, generateKeyPairSync, KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeBase64url, endorsementMessage, jwkThumbprint, signEndorsement, verifyEndorsement, verifyEnvelope } from './envelope';
import { canonicalBytes } from './license-signature';
import { SigningService } from './signing.service';

interface Case {
  name: string;
  kind: string;
  input: { trusted_keys?: string[]; revoked_keys?: string[]; envelope?: unknown };
  expect: { verdict: string; reason: string | null };
}

/** docs/signing.md, Envelopes; Endorsed rotation: the server's side of what every client checks. */
describe('signed envelopes', () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ed = generateKeyPairSync('ed25519');
  const service = new SigningService();
  const payload = { license_key: 'POS-1', customer: { name: 'Ćevapi 😀', email: null }, key_id: 'x' };

  it('decodes only unpadded base64url in its one spelling', () => {
    expect(decodeBase64url('aGk')).toEqual(Buffer.from('hi'));
    expect(decodeBase64url('')).toEqual(Buffer.alloc(0));
    for (const bad of ['aGk=', 'aG k', 'a+/b', 'aGl', 'a', null, 1]) expect(decodeBase64url(bad)).toBeUndefined();
  });

  it.each([
    ['RSA', rsa, 'RS256', 'RSA-SHA256:'],
    ['Ed25519', ed, 'EdDSA', 'Ed25519:'],
  ] as const)(
    '%s: the envelope wraps the canonical bytes and the legacy signature is the same signature',
    async (_n, pair, alg, prefix) => {
      const signed = await service.signWithEnvelope(payload, {
        keyId: 'k',
        privateKey: pair.privateKey,
        algorithm: prefix.slice(0, -1) as never,
      });
      expect(signed.envelope).toMatchObject({ alg, key_id: 'k' });
      expect(Buffer.from(signed.envelope.payload, 'base64url')).toEqual(canonicalBytes(payload));
      expect(signed.signature).toBe(prefix + Buffer.from(signed.envelope.signature, 'base64url').toString('base64'));
      expect(await service.sign(payload, pair.privateKey)).toBe(signed.signature);
      expect(verifyEnvelope(signed.envelope, (id) => (id === 'k' ? { key: pair.publicKey } : undefined))).toEqual({
        ok: true,
        keyId: 'k',
        bytes: canonicalBytes(payload),
        value: payload,
      });
    },
  );

  it('endorsements: the message names the RFC 7638 thumbprint; only the endorser verifies it, only for that key', () => {
    expect(endorsementMessage(ed.publicKey).toString('ascii')).toBe(
      `licence-server-endorsement-v1:${jwkThumbprint(ed.publicKey).toString('base64url')}`,
    );
    // RFC 8037 A.3: the thumbprint of its example Ed25519 key.
    const rfcKey = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' },
      format: 'jwk',
    });
    expect(jwkThumbprint(rfcKey).toString('base64url')).toBe('kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k');
    const signature = signEndorsement(ed.publicKey, rsa.privateKey);
    expect(signature).toMatch(/^[A-Za-z0-9_-]{342}$/);
    expect(verifyEndorsement(ed.publicKey, signature, rsa.publicKey)).toBe(true);
    expect(verifyEndorsement(rsa.publicKey, signature, rsa.publicKey)).toBe(false);
    expect(verifyEndorsement(ed.publicKey, signature + 'A', rsa.publicKey)).toBe(false);
    expect(verifyEndorsement(ed.publicKey, signEndorsement(ed.publicKey, ed.privateKey), rsa.publicKey)).toBe(false);
  });

  describe('docs/test-vectors/conformance.json, envelope cases', () => {
    const dir = join(__dirname, '..', '..', 'docs', 'test-vectors');
    const doc = JSON.parse(readFileSync(join(dir, 'conformance.json'), 'utf8')) as {
      keys: Record<string, { key_id: string; public_key_pem: string }>;
      cases: Case[];
    };
    const cases = doc.cases.filter((c) => c.kind === 'envelope');
    it('lists the hostile inputs', () => expect(cases.length).toBeGreaterThanOrEqual(12));
    it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
      const keys = new Map<string, KeyObject>(
        (c.input.trusted_keys ?? []).map((name) => [doc.keys[name].key_id, createPublicKey(doc.keys[name].public_key_pem)]),
      );
      const verdict = verifyEnvelope(c.input.envelope, (id) =>
        keys.has(id) ? { key: keys.get(id)!, revoked: c.input.revoked_keys?.includes(id) } : undefined,
      );
      expect({ verdict: verdict.ok ? 'accept' : 'refuse', reason: verdict.ok ? null : verdict.reason }).toEqual(c.expect);
    });
  });
});
