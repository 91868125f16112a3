import assert from 'node:assert/strict';
import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { KeySet, listedKeys, resolveTrust, verifyEnvelope, verifyEnvelopeFile } from '../src/index.js';
import { REPO_ROOT } from './server.js';

interface Case {
  name: string;
  kind: 'envelope' | 'license_file' | 'key_trust';
  input: Record<string, unknown> & { trusted_keys?: string[]; revoked_keys?: string[] };
  expect: { verdict: string; reason: string | null };
}
const document = JSON.parse(readFileSync(join(REPO_ROOT, 'docs', 'test-vectors', 'conformance.json'), 'utf8')) as {
  keys: Record<string, { key_id: string; public_key_pem: string }>;
  cases: Case[];
};
const keyOf = (name: string): KeyObject => createPublicKey(document.keys[name].public_key_pem);
const keySet = (names: string[] = []) => KeySet.from(names.map((name) => document.keys[name]));

/** The one list of conformance cases in docs/test-vectors (the Python and Go clients run the same list). */
describe('docs/test-vectors/conformance.json', () => {
  it('covers every hostile input of the envelope design', () => {
    const reasons = new Set(document.cases.map((c) => c.expect.reason));
    for (const reason of [
      'NON_CANONICAL_ENCODING',
      'ALG_MISMATCH',
      'KEY_REVOKED',
      'UNKNOWN_KEY',
      'PAYLOAD_MISMATCH',
      'UNSUPPORTED_FORMAT',
      'ENDORSER_UNKNOWN',
      'ENDORSER_REVOKED',
      'ENDORSEMENT_LOOP',
      'UNENDORSED_KEY',
    ])
      assert.ok(reasons.has(reason), reason);
  });

  for (const c of document.cases) {
    it(`${c.kind} ${c.name}: ${c.expect.verdict}${c.expect.reason ? ` ${c.expect.reason}` : ''}`, () => {
      if (c.kind === 'key_trust') {
        const anchors = new Map(
          [...(c.input.shipped_keys as string[]), ...(c.input.root_keys as string[])].map((name) => [
            document.keys[name].key_id,
            keyOf(name),
          ]),
        );
        const trust = resolveTrust(anchors, listedKeys(c.input.published));
        const keyId = c.input.key_id as string;
        const trusted = !trust.refused.has(keyId) && (trust.endorsed.has(keyId) || anchors.has(keyId));
        assert.deepEqual(
          { verdict: trusted ? 'trusted' : 'refused', reason: trusted ? null : (trust.refused.get(keyId) ?? null) },
          c.expect,
        );
        return;
      }
      const keys = keySet(c.input.trusted_keys);
      const revoked = (c.input.revoked_keys ?? []) as string[];
      const result =
        c.kind === 'envelope'
          ? verifyEnvelope(c.input.envelope, (id) => keys.get(id), revoked)
          : verifyEnvelopeFile(c.input.license_file as string, keys, revoked);
      assert.deepEqual({ verdict: result.ok ? 'accept' : 'refuse', reason: result.ok ? null : result.reason }, c.expect);
    });
  }
});
