// Relay pool and lease cases beyond docs/test-vectors/relay.json (docs/clients.md, Relay leases), deterministic: the
// vendor, relay and stranger keys are the test keys of docs/test-vectors (test-key.pem, test-keys.json), and RSA
// PKCS#1 v1.5 and Ed25519 signatures are deterministic, so the same bytes come out every run. Every client runs the
// list with its own code (clients/conformance-format.md, "relay_lease"); the committed output is
// clients/relay-conformance.json:
//   node clients/relay-cases.mjs > clients/relay-conformance.json && npx prettier --write clients/relay-conformance.json
import { createHash, createPrivateKey, createPublicKey, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const vectors = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'test-vectors');
const privateKeys = JSON.parse(readFileSync(join(vectors, 'test-keys.json'), 'utf8'));
privateKeys.rsa = readFileSync(join(vectors, 'test-key.pem'), 'utf8');

const NOW = '2026-12-01T12:00:00.000Z';
const FINGERPRINT = `sha256:${'ab'.repeat(32)}`;
const RELAY_FINGERPRINT = `sha256:${'cd'.repeat(32)}`;
const at = (offsetSeconds) => new Date(Date.parse(NOW) + offsetSeconds * 1000).toISOString();
const b64url = (bytes) => Buffer.from(bytes).toString('base64url');

/** RFC 8785 for what these documents hold (strings, integers, booleans, null, arrays, objects). */
function canonicalize(value) {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalize).join(',')}]`;
  const members = Object.keys(value)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalize(value[k])}`);
  return `{${members.join(',')}}`;
}

function makeKey(privatePem) {
  const privateKey = typeof privatePem === 'string' ? createPrivateKey(privatePem) : privatePem;
  const publicKey = createPublicKey(privateKey);
  const der = publicKey.export({ type: 'spki', format: 'der' });
  const ed = publicKey.asymmetricKeyType === 'ed25519';
  return {
    keyId: createHash('sha256').update(der).digest('hex').slice(0, 16),
    alg: ed ? 'EdDSA' : 'RS256',
    pem: publicKey.export({ type: 'spki', format: 'pem' }),
    signBytes: (bytes) => sign(ed ? null : 'sha256', bytes, privateKey),
  };
}

const keys = {
  ed25519: makeKey(privateKeys.ed25519),
  rsa: makeKey(privateKeys.rsa),
  stranger: makeKey(privateKeys.stranger),
  relay: makeKey(privateKeys.relay),
};

/** An envelope over the JCS bytes of `value`, by `key`, naming `keyId` (another key's id for a forgery). */
const envelope = (key, value, keyId = key.keyId) => {
  const bytes = Buffer.from(canonicalize(value), 'utf8');
  return { payload: b64url(bytes), alg: key.alg, key_id: keyId, signature: b64url(key.signBytes(bytes)) };
};

const armor = (document) =>
  [
    '-----BEGIN RELAY POOL-----',
    ...Buffer.from(JSON.stringify(document), 'utf8')
      .toString('base64')
      .match(/.{1,64}/g),
    '-----END RELAY POOL-----',
    '',
  ].join('\n');

function pool(vendor, changes = {}) {
  return {
    pool_id: '3f6b1c2e-7d4a-4e8b-9c1d-2a5f6e7b8c9d',
    license: {
      license_key: 'CAD-RELAY-POOLS-00000-00000',
      product: 'CAD_SUITE',
      license_type: 'YEARLY',
      issued_at: at(-30 * 86400),
      expires_at: at(335 * 86400),
      activated_at: at(-86400),
      machine_fingerprint: RELAY_FINGERPRINT,
      grace_days: 7,
      limits: { max_installations: 25 },
      features: ['render', 'export'],
      customer: { name: 'Tovarna Ünïcødé d.o.o.', email: 'it@tovarna.example' },
      key_id: vendor.keyId,
      signed_at: at(-86400),
    },
    seats: 10,
    relay_public_key: keys.relay.pem,
    relay_key_id: keys.relay.keyId,
    issued_at: at(-86400),
    expires_at: at(29 * 86400),
    ...changes,
  };
}

const poolFile = (value, signer = keys.ed25519, keyId = signer.keyId, signed = value) =>
  armor({ pool: value, envelope: envelope(signer, signed, keyId) });

function lease(changes = {}) {
  return {
    lease_id: '8a1f2b3c-4d5e-4f60-8172-93a4b5c6d7e8',
    pool_id: '3f6b1c2e-7d4a-4e8b-9c1d-2a5f6e7b8c9d',
    machine_fingerprint: FINGERPRINT,
    issued_at: at(-60),
    expires_at: at(240),
    heartbeat_interval_seconds: 100,
    ...changes,
  };
}

const answer = ({
  leaseValue = lease(),
  signer = keys.relay,
  keyId = signer.keyId,
  signed = leaseValue,
  file = poolFile(pool(keys.ed25519)),
} = {}) => ({
  lease: leaseValue,
  envelope: envelope(signer, signed, keyId),
  pool_file: file,
});

const ok = null;
const cases = [
  ['relay-valid', 'A pool signed by the vendor (Ed25519) and a lease signed by its relay key, for this machine.', answer(), {}, ok],
  [
    'relay-valid-rsa-vendor',
    'The same with the pool signed by the vendor RSA key.',
    answer({ file: poolFile(pool(keys.rsa), keys.rsa) }),
    { trusted_keys: ['rsa'] },
    ok,
  ],
  [
    'relay-pool-forged',
    "A pool signed by another key that names the vendor key's id: refused.",
    answer({ file: poolFile(pool(keys.ed25519), keys.stranger, keys.ed25519.keyId) }),
    {},
    'SIGNATURE_INVALID',
  ],
  [
    'relay-pool-unknown-key',
    'A pool signed by a key the client was not shipped and no trusted key endorses: refused.',
    answer({ file: poolFile(pool(keys.stranger), keys.stranger) }),
    {},
    'SIGNATURE_INVALID',
  ],
  [
    'relay-pool-vendor-key-revoked',
    'A pool signed by a vendor key listed as revoked: refused.',
    answer(),
    { revoked_keys: [keys.ed25519.keyId] },
    'SIGNATURE_INVALID',
  ],
  [
    'relay-pool-not-payload',
    "A pool whose members differ from the envelope's payload (more seats beside a signed pool of 10): refused.",
    answer({ file: poolFile(pool(keys.ed25519, { seats: 500 }), keys.ed25519, keys.ed25519.keyId, pool(keys.ed25519)) }),
    {},
    'POOL_MISMATCH',
  ],
  [
    'relay-pool-not-armored',
    'A pool file that is not a RELAY POOL armor: refused.',
    answer({ file: '-----BEGIN LICENSE FILE-----\ne30=\n-----END LICENSE FILE-----\n' }),
    {},
    'MALFORMED_POOL_FILE',
  ],
  [
    'relay-pool-key-id-not-key',
    "A vendor-signed pool whose relay_key_id is not its relay_public_key's id: refused.",
    answer({ file: poolFile(pool(keys.ed25519, { relay_key_id: keys.stranger.keyId }), keys.ed25519), keyId: keys.relay.keyId }),
    {},
    'WRONG_RELAY_KEY',
  ],
  [
    'relay-pool-other-product',
    "A pool of another product's licence, for an application that names its product: refused.",
    answer(),
    { product: 'OTHER_APP' },
    'PRODUCT_MISMATCH',
  ],
  ['relay-pool-expired', 'A pool past its expires_at: refused.', answer(), { now: at(30 * 86400) }, 'POOL_EXPIRED'],
  [
    'relay-lease-other-key',
    "A lease signed by another key under that key's id: refused.",
    answer({ signer: keys.stranger }),
    {},
    'SIGNATURE_INVALID',
  ],
  [
    'relay-lease-other-key-relay-id',
    "A lease signed by another key that names the relay key's id: refused.",
    answer({ signer: keys.stranger, keyId: keys.relay.keyId }),
    {},
    'SIGNATURE_INVALID',
  ],
  [
    'relay-lease-vendor-key',
    'A lease signed by a vendor key the client trusts for pools, but not the relay key of the pool: refused.',
    answer({ signer: keys.ed25519 }),
    {},
    'SIGNATURE_INVALID',
  ],
  [
    'relay-lease-not-payload',
    "A lease whose members differ from the envelope's payload (a later expires_at): refused.",
    answer({ leaseValue: lease({ expires_at: at(86400) }), signed: lease() }),
    {},
    'LEASE_MISMATCH',
  ],
  [
    'relay-lease-other-pool',
    'A lease of another pool: refused.',
    answer({ leaseValue: lease({ pool_id: '00000000-0000-4000-8000-000000000000' }) }),
    {},
    'LEASE_MISMATCH',
  ],
  [
    'relay-lease-other-fingerprint',
    "A lease for another machine's fingerprint: refused.",
    answer({ leaseValue: lease({ machine_fingerprint: `sha256:${'ef'.repeat(32)}` }) }),
    {},
    'LEASE_MISMATCH',
  ],
  ['relay-lease-expired', 'A lease past its expires_at: refused.', answer(), { now: at(240) }, 'LEASE_EXPIRED'],
].map(([name, description, relayAnswer, overrides, reason]) => ({
  name,
  kind: 'relay_lease',
  description,
  input: {
    answer: relayAnswer,
    trusted_keys: ['ed25519'],
    revoked_keys: [],
    machine_fingerprint: FINGERPRINT,
    product: 'CAD_SUITE',
    now: NOW,
    ...overrides,
  },
  expect: { verdict: reason ? 'refuse' : 'accept', reason },
}));

const document = {
  description:
    'Relay pool and lease cases (clients/relay-cases.mjs). relay_lease: verify input.answer (a POST /relay/v1/leases answer: lease, envelope, pool_file) as leaseFromRelay() does: the pool file with input.trusted_keys (input.revoked_keys listed as revoked), its pool equal to the envelope payload, for input.product, not expired at input.now; then the lease envelope with the pool relay key only, the lease equal to its payload, of that pool, for input.machine_fingerprint, not expired at input.now.',
  keys: Object.fromEntries(Object.entries(keys).map(([name, key]) => [name, { key_id: key.keyId, public_key_pem: key.pem }])),
  cases,
};
process.stdout.write(JSON.stringify(document, null, 2) + '\n');
