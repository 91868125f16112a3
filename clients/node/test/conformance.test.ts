import assert from 'node:assert/strict';
import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { checkOffline, KeySet, listedKeys, resolveTrust, verifyAnswerDocument, verifyEnvelope, verifyEnvelopeFile } from '../src/index.js';
import type { SignedLicense } from '../src/index.js';
import { REPO_ROOT } from './server.js';

interface Case {
  name: string;
  kind: 'envelope' | 'license_file' | 'key_trust' | 'signed_answer' | 'trial';
  input: Record<string, unknown> & { trusted_keys?: string[]; revoked_keys?: string[] };
  expect: { verdict: string; reason: string | null; status?: string };
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
      if (c.kind === 'signed_answer') {
        // The client's own check of a validate or update check answer, in envelope mode (docs/clients.md, Envelopes and trusted keys).
        const seat = { license_key: c.input.license_key as string, machine_fingerprint: c.input.machine_fingerprint as string };
        const result = verifyAnswerDocument(c.input.answer, c.input.nonce as string, seat, keys, revoked, true);
        assert.deepEqual({ verdict: result.ok ? 'accept' : 'refuse', reason: result.ok ? null : result.reason }, c.expect);
        return;
      }
      if (c.kind === 'trial') {
        // A trial answer kept as this machine's activation, then the offline check check() runs.
        const result = checkOffline({
          state: { version: 1, activation: c.input.answer as SignedLicense },
          keys,
          withdrawnKeyIds: revoked,
          fingerprint: c.input.machine_fingerprint as string,
          product: c.input.product as string,
          now: new Date(c.input.now as string),
          clockToleranceSeconds: 300,
        });
        const got = result.ok ? { verdict: 'accept', reason: null, status: result.status } : { verdict: 'refuse', reason: result.reason };
        assert.deepEqual(got, c.expect);
        return;
      }
      const result =
        c.kind === 'envelope'
          ? verifyEnvelope(c.input.envelope, (id) => keys.get(id), revoked)
          : verifyEnvelopeFile(c.input.license_file as string, keys, revoked);
      assert.deepEqual({ verdict: result.ok ? 'accept' : 'refuse', reason: result.ok ? null : result.reason }, c.expect);
    });
  }
});
