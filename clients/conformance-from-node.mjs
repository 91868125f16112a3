// Conformance cases made with Node's crypto (the server's own library), so the Python and Go clients prove they
// agree with it on key ids, RFC 7638 thumbprints, endorsements, RSA and Ed25519 envelopes, byte for byte.
// Prints a list in the format of clients/conformance-format.md:  node clients/conformance-from-node.mjs > cases.json
import { createHash, generateKeyPairSync, sign } from 'node:crypto';

const NOW = '2026-11-26T08:00:00.000Z';
const FINGERPRINT = `sha256:${'ef'.repeat(32)}`;
const b64url = (buffer) => Buffer.from(buffer).toString('base64url');
const at = (offsetSeconds) => new Date(Date.parse(NOW) + offsetSeconds * 1000).toISOString();

function makeKey(type) {
  const { publicKey, privateKey } = type === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ed25519');
  const keyId = createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 16);
  const jwk = publicKey.export({ format: 'jwk' });
  const members = type === 'rsa' ? { e: jwk.e, kty: 'RSA', n: jwk.n } : { crv: 'Ed25519', kty: 'OKP', x: jwk.x };
  const thumbprint = createHash('sha256').update(JSON.stringify(members)).digest();
  const signBytes = (bytes) => sign(type === 'rsa' ? 'sha256' : null, bytes, privateKey);
  return {
    keyId,
    alg: type === 'rsa' ? 'RS256' : 'EdDSA',
    algorithm: type === 'rsa' ? 'RSA-SHA256' : 'Ed25519',
    pem: publicKey.export({ type: 'spki', format: 'pem' }),
    jwk: { ...jwk, kid: keyId },
    thumbprint,
    signBytes,
  };
}

const endorse = (by, key) => ({
  key_id: by.keyId,
  signature: b64url(by.signBytes(Buffer.from(`licence-server-endorsement-v1:${b64url(key.thumbprint)}`, 'ascii'))),
});
const entry = (key, status, endorsements = []) => ({
  key_id: key.keyId,
  algorithm: key.algorithm,
  status,
  public_key_pem: key.pem,
  endorsements,
});
const envelope = (key, bytes) => ({ payload: b64url(bytes), alg: key.alg, key_id: key.keyId, signature: b64url(key.signBytes(bytes)) });

function licence(key) {
  return {
    license_key: 'POS-NODEE-CASES-00000-00000',
    product: 'POS_RETAIL',
    license_type: 'YEARLY',
    issued_at: at(-86400),
    expires_at: at(364 * 86400),
    activated_at: at(-3600),
    machine_fingerprint: FINGERPRINT,
    grace_days: 7,
    limits: { max_installations: 1 },
    features: ['reports'],
    customer: { name: 'Ünïcødé d.o.o. <&>', email: null },
    key_id: key.keyId,
    signed_at: at(-3600),
    file_issued_at: at(-60),
    file_expires_at: at(30 * 86400),
  };
}

function licenceFile(key) {
  const license = licence(key);
  const bytes = Buffer.from(JSON.stringify(license), 'utf8');
  const text = Buffer.from(JSON.stringify({ license, envelope: envelope(key, bytes) }), 'utf8').toString('base64');
  return ['-----BEGIN LICENSE FILE-----', ...text.match(/.{1,64}/g), '-----END LICENSE FILE-----', ''].join('\n');
}

const rsa1 = makeKey('rsa');
const ed = makeKey('ed25519');
const rsa2 = makeKey('rsa');
const rotation = { keys: [entry(rsa2, 'active', [endorse(ed, rsa2)]), entry(ed, 'retired', [endorse(rsa1, ed)]), entry(rsa1, 'retired')] };
const context = { now: NOW, machine_fingerprint: FINGERPRINT, product: 'POS_RETAIL' };
const nonce = 'node-made-nonce-0123456789';
const answer = {
  valid: true,
  status: 'active',
  code: null,
  nonce,
  license_key: 'POS-NODEE-CASES-00000-00000',
  machine_fingerprint: FINGERPRINT,
  checked_at: NOW,
  key_id: ed.keyId,
};
const answerBytes = Buffer.from(JSON.stringify(answer), 'utf8');

const cases = [
  [
    'node-rsa-file',
    'an RSA envelope made by Node, the key shipped as a JWK',
    { kind: 'license_file', text: licenceFile(rsa1) },
    { shipped_keys: [rsa1.jwk] },
    'accept',
    null,
  ],
  [
    'node-ed25519-endorsed',
    'an Ed25519 envelope made by Node, the key endorsed by the shipped RSA key',
    { kind: 'license_file', text: licenceFile(ed) },
    { shipped_keys: [{ public_key_pem: rsa1.pem }], published_keys: rotation },
    'accept',
    null,
  ],
  [
    'node-rsa-ed25519-rsa',
    'two rotations made by Node, only the first key shipped',
    { kind: 'license_file', text: licenceFile(rsa2) },
    { shipped_keys: [{ public_key_pem: rsa1.pem }], published_keys: rotation },
    'accept',
    null,
  ],
  [
    'node-ed25519-jwk',
    'an Ed25519 key shipped as an OKP JWK',
    { kind: 'license_file', text: licenceFile(ed) },
    { shipped_keys: [ed.jwk] },
    'accept',
    null,
  ],
  [
    'node-validation',
    'a validate answer in an Ed25519 envelope',
    { kind: 'validation', answer: { ...answer, envelope: envelope(ed, answerBytes) }, nonce, license_key: answer.license_key },
    { shipped_keys: [ed.jwk] },
    'accept',
    null,
  ],
  [
    'node-revoked',
    'the Ed25519 key listed as revoked',
    { kind: 'license_file', text: licenceFile(ed) },
    { shipped_keys: [{ public_key_pem: rsa1.pem }], published_keys: { keys: [entry(ed, 'revoked', [endorse(rsa1, ed)])] } },
    'refuse',
    'KEY_REVOKED',
  ],
].map(([name, description, input, trust, verdict, reason]) => ({ name, description, input, trust, context, expect: { verdict, reason } }));

process.stdout.write(`${JSON.stringify({ format: 'licence-server-conformance-v1', cases }, null, 2)}\n`);
