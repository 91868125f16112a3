import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, KeyObject, sign } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { armor, LICENSE_FILE_LABEL } from '../src/activation/license-file';
import { algorithmOfKey, base64url, digestOf, ENVELOPE_ALG, signEndorsement, SignedEnvelope } from '../src/signing/envelope';
import { canonicalBytes, keyIdOf, SIGNATURE_PREFIX } from '../src/signing/license-signature';
import { relayVectors } from './relay-vectors';

/**
 * Writes docs/test-vectors/vectors.json: payloads with hard text, their RFC 8785 bytes (hex) and RSA-SHA256
 * signatures under a fixed TEST key pair, so any client implementation can check itself. RSASSA-PKCS1-v1_5 is
 * deterministic, so the same key gives the same signatures. Run: `npm run test-vectors`.
 */
// Run from dist/scripts: the repository's docs/ folder is two levels up.
const sourceDir = join(__dirname, '..', '..', 'docs', 'test-vectors');

export interface TestVector {
  name: string;
  description: string;
  /** The payload as JSON text: parse it, canonicalize the parsed value, compare with canonical_hex. */
  payload_json: string;
  canonical_hex: string;
  signature: string;
}

const base = {
  license_key: 'POS-7K2QF-9XWMB-R4TZN-H8CVD',
  product: 'POS_RETAIL',
  license_type: 'YEARLY',
  issued_at: '2026-01-15T09:30:00.000Z',
  expires_at: '2027-01-15T09:30:00.000Z',
  activated_at: '2026-01-15T09:31:12.345Z',
  signed_at: '2026-01-15T09:31:12.400Z',
  machine_fingerprint: 'sha256:' + '0123456789abcdef'.repeat(4),
  grace_days: 7,
  limits: { max_installations: 3, max_users: 25 },
  features: ['reports', 'inventory'],
  policy: { heartbeat_timeout_seconds: 600, max_deactivations_per_30_days: null, license_file_ttl_days: 30 },
  customer: { name: 'Kafana Zlatni Bokal d.o.o.', email: 'office@example.rs' },
  key_id: '',
};

/** [name, description, payload as JSON text]: the text is what a client receives on the wire. */
const cases: [string, string, string][] = [
  ['plain', 'An activation payload with ASCII text only.', JSON.stringify(base)],
  [
    'emoji-and-astral',
    'A customer name with emoji outside the BMP and a variation selector (U+2764 U+FE0F); JCS writes them as raw UTF-8.',
    JSON.stringify({ ...base, customer: { name: 'Café ❤️ 😀 𝄞', email: null } }),
  ],
  [
    'combining-marks',
    'Decomposed characters (e + U+0301): JCS does not normalise Unicode; the bytes stay as received.',
    JSON.stringify({ ...base, customer: { name: 'Mu\u0308ller Ðorđe\u0301 Čačak', email: 'muller@example.com' } }),
  ],
  [
    'right-to-left',
    'Hebrew and Arabic text with a right-to-left mark (U+200F).',
    JSON.stringify({ ...base, customer: { name: '\u200fשלום עולם — مرحبا', email: null } }),
  ],
  [
    'controls-and-del',
    'Control characters: JCS escapes U+0000..U+001F (\\b \\t \\n \\f \\r short, others as \\u00xx lower-case hex) and leaves DEL (U+007F), U+2028 and U+2029 raw. jq, and Go/.NET/Python defaults, do not.',
    JSON.stringify({
      ...base,
      customer: { name: 'a\u0000b\u0001c\bd\te\nf\u000bg\fh\ri\u001fj\u007fk\u2028l\u2029m"n\\o/p', email: null },
    }),
  ],
  [
    'html-characters',
    "The characters Go escapes by default (<, >, &) and .NET escapes by default (also + and '): JCS keeps them raw.",
    JSON.stringify({ ...base, customer: { name: '<script>alert("x")</script> & Co + \'friends\'', email: 'a+b@example.com' } }),
  ],
  [
    'large-integers',
    'Integers up to 2^53-1 keep every digit; JCS writes numbers as ECMAScript does (no ".0", no exponent below 1e21). Keep numbers as received: never re-encode them through a float type of another width.',
    JSON.stringify({ ...base, limits: { max_installations: 2147483647, max_seats: 9007199254740991, zero: 0, negative_hint: -1 } }),
  ],
  [
    'member-order',
    'Members sorted by UTF-16 code units, not by code points: U+FB33 sorts after U+1F600 (surrogate 0xD83D), and upper case before lower case.',
    JSON.stringify({ ...base, limits: { b: 1, a: 2, aa: 3, B: 4, é: 5, '€': 6, '😀': 7, דּ: 8 } }),
  ],
  [
    'nulls-and-empties',
    'null values, an empty feature list and an empty limits object: members are never dropped.',
    JSON.stringify({ ...base, expires_at: null, features: [], limits: {}, customer: { name: 'X', email: null } }),
  ],
];

/** A signed `/validate` answer as received: a client verifies it without `signature`, then checks nonce and subject. */
export interface ValidateAnswerVector {
  name: string;
  description: string;
  /** What the client sent: the answer must echo the nonce and name this licence and machine. */
  nonce: string;
  license_key: string;
  machine_fingerprint: string;
  /** The whole answer as JSON text, `signature` included. */
  answer_json: string;
  /** RFC 8785 bytes of the answer without `signature` (what is signed). */
  canonical_hex: string;
}

const validateAnswers: [string, string, Record<string, unknown>][] = [
  [
    'validate-answer-valid',
    'A signed validate answer for a valid licence: the signed bytes are the JCS form of the answer without `signature`.',
    { valid: true, status: 'active', expires_at: '2027-01-15T09:30:00.000Z', revoked: false, grace_ends_at: null, code: null },
  ],
  [
    'validate-answer-revoked',
    'A signed validate answer that says no (revoked): a verified "no" is a verdict; an unsigned error answer is not.',
    { valid: false, status: 'revoked', expires_at: '2027-01-15T09:30:00.000Z', revoked: true, grace_ends_at: null, code: 'KEY_REVOKED' },
  ],
];

function main(): void {
  const keyFile = join(sourceDir, 'test-key.pem');
  if (!existsSync(keyFile)) {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }));
  }
  const privateKey = createPrivateKey(readFileSync(keyFile));
  const publicKey = createPublicKey(privateKey);
  writeFileSync(join(sourceDir, 'test-key.pub.pem'), publicKey.export({ type: 'spki', format: 'pem' }));
  const keyId = keyIdOf(publicKey);
  const vectors: TestVector[] = cases.map(([name, description, text]) => {
    const withKey = text.replace('"key_id":""', `"key_id":"${keyId}"`);
    const bytes = canonicalBytes(JSON.parse(withKey));
    return {
      name,
      description,
      payload_json: withKey,
      canonical_hex: bytes.toString('hex'),
      signature: SIGNATURE_PREFIX + sign('sha256', bytes, privateKey).toString('base64'),
    };
  });
  const nonce = 'bm9uY2UtZm9yLXRlc3QtdmVjdG9ycy0wMQ';
  const answers: ValidateAnswerVector[] = validateAnswers.map(([name, description, result]) => {
    const unsigned = {
      ...result,
      nonce,
      license_key: base.license_key,
      machine_fingerprint: base.machine_fingerprint,
      checked_at: '2026-02-01T08:30:00.123Z',
      key_id: keyId,
    };
    const bytes = canonicalBytes(unsigned);
    const signature = SIGNATURE_PREFIX + sign('sha256', bytes, privateKey).toString('base64');
    return {
      name,
      description,
      nonce,
      license_key: base.license_key,
      machine_fingerprint: base.machine_fingerprint,
      answer_json: JSON.stringify({ ...unsigned, signature }),
      canonical_hex: bytes.toString('hex'),
    };
  });
  const document = {
    description:
      'Test vectors for the licence signature: parse payload_json, canonicalize (RFC 8785), compare with canonical_hex, verify signature (RSASSA-PKCS1-v1_5, SHA-256) with test-key.pub.pem. TEST KEY ONLY: never use it for real licences.',
    algorithm: 'RSA-SHA256',
    key_id: keyId,
    public_key_pem: publicKey.export({ type: 'spki', format: 'pem' }),
    vectors,
    validate_answers: answers,
  };
  const extra = conformance(privateKey, JSON.parse(vectors[0].payload_json) as Record<string, unknown>);
  writeFileSync(join(sourceDir, 'vectors.json'), JSON.stringify({ ...document, ...extra.vectors }, null, 2) + '\n');
  writeFileSync(join(sourceDir, 'conformance.json'), JSON.stringify(extra.conformance, null, 2) + '\n');
  console.log(`wrote ${vectors.length} vectors and ${answers.length} validate answers (key ${keyId}) to ${sourceDir}`);
  console.log(`wrote ${extra.conformance.cases.length} conformance cases to ${join(sourceDir, 'conformance.json')}`);
  const keys = testKeys();
  const relay = relayVectors(
    { vendorRsa: privateKey, vendorEd25519: keys.ed25519, relay: keys.relay, stranger: keys.stranger },
    JSON.parse(vectors[0].payload_json) as Record<string, unknown>,
  );
  writeFileSync(join(sourceDir, 'relay.json'), JSON.stringify(relay, null, 2) + '\n');
  console.log(`wrote ${relay.pools.length} pool and ${relay.leases.length} lease vectors to ${join(sourceDir, 'relay.json')}`);
}

type TestKeyName = 'ed25519' | 'rsa-2' | 'root' | 'stranger' | 'loop-a' | 'loop-b' | 'relay';

/** The other test keys (PKCS#8 PEMs by name), generated once into test-keys.json: TEST KEYS ONLY. */
function testKeys(): Record<TestKeyName, KeyObject> {
  const file = join(sourceDir, 'test-keys.json');
  const pems: Record<string, string> = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>) : {};
  const wanted: [TestKeyName, 'rsa' | 'ed25519'][] = [
    ['ed25519', 'ed25519'],
    ['rsa-2', 'rsa'],
    ['root', 'ed25519'],
    ['stranger', 'ed25519'],
    ['loop-a', 'ed25519'],
    ['loop-b', 'ed25519'],
    ['relay', 'ed25519'],
  ];
  for (const [name, type] of wanted) {
    if (pems[name]) continue;
    const pair = type === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ed25519');
    pems[name] = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  }
  writeFileSync(file, JSON.stringify(pems, null, 2) + '\n');
  return Object.fromEntries(Object.entries(pems).map(([name, pem]) => [name, createPrivateKey(pem)])) as Record<TestKeyName, KeyObject>;
}

const pemOf = (key: KeyObject) => createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString();
const idOf = (key: KeyObject) => keyIdOf(createPublicKey(key));

function envelopeFor(bytes: Buffer, key: KeyObject): SignedEnvelope {
  const algorithm = algorithmOfKey(key)!;
  return {
    payload: base64url(bytes),
    alg: ENVELOPE_ALG[algorithm],
    key_id: idOf(key),
    signature: base64url(sign(digestOf(algorithm), bytes, key)),
  };
}

type Verdict = { verdict: 'accept' | 'refuse' | 'trusted' | 'refused'; reason: string | null; status?: string };
interface ConformanceCase {
  name: string;
  kind: 'envelope' | 'license_file' | 'key_trust' | 'signed_answer' | 'trial';
  description: string;
  input: Record<string, unknown>;
  expect: Verdict;
}

/**
 * Envelope, Ed25519 and endorsement-chain vectors, and the conformance cases every client runs (docs/signing.md,
 * Envelopes; Endorsed rotation): the input, the verdict and the reason.
 */
function conformance(rsaKey: KeyObject, license: Record<string, unknown>) {
  const keys = { rsa: rsaKey, ...testKeys() };
  const named = (name: keyof typeof keys) => ({ key_id: idOf(keys[name]), public_key_pem: pemOf(keys[name]) });
  const keyTable = Object.fromEntries(Object.keys(keys).map((name) => [name, named(name as keyof typeof keys)]));

  const rsaLicense = { ...license, key_id: idOf(keys.rsa) };
  const edLicense = { ...license, key_id: idOf(keys.ed25519) };
  const rsaEnvelope = envelopeFor(canonicalBytes(rsaLicense), keys.rsa);
  const edEnvelope = envelopeFor(canonicalBytes(edLicense), keys.ed25519);
  if (!/[-_]/.test(rsaEnvelope.payload + rsaEnvelope.signature)) throw new Error('pick a payload whose base64url has - or _');

  const standard = (text: string) => text.replace(/-/g, '+').replace(/_/g, '/');
  const padded = (text: string) => text + '='.repeat((4 - (text.length % 4)) % 4 || 2);
  const envelopeCase = (
    name: string,
    description: string,
    envelope: unknown,
    expect: Verdict,
    revoked: string[] = [],
  ): ConformanceCase => ({
    name,
    kind: 'envelope',
    description,
    input: { trusted_keys: ['rsa', 'ed25519'], revoked_keys: revoked, envelope },
    expect,
  });
  const accept: Verdict = { verdict: 'accept', reason: null };
  const refuse = (reason: string): Verdict => ({ verdict: 'refuse', reason });
  const notJson = envelopeFor(Buffer.from('not json {', 'utf8'), keys.rsa);

  const fileOf = (document: unknown) => armor(LICENSE_FILE_LABEL, document);
  const rsaSignature = SIGNATURE_PREFIX + sign('sha256', canonicalBytes(rsaLicense), keys.rsa).toString('base64');

  const endorse = (newKey: KeyObject, by: KeyObject) => ({ key_id: idOf(by), signature: signEndorsement(createPublicKey(newKey), by) });
  const listed = (name: keyof typeof keys, status: string, endorsements: { key_id: string; signature: string }[]) => ({
    ...named(name),
    algorithm: algorithmOfKey(keys[name]),
    status,
    endorsements,
  });
  const edByRsa = endorse(keys.ed25519, keys.rsa);
  const rsa2ByEd = endorse(keys['rsa-2'], keys.ed25519);
  const trustCase = (
    name: string,
    description: string,
    published: unknown[],
    keyName: keyof typeof keys,
    expect: Verdict,
    roots: string[] = [],
  ): ConformanceCase => ({
    name,
    kind: 'key_trust',
    description,
    input: { shipped_keys: ['rsa'], root_keys: roots, published, key_id: idOf(keys[keyName]) },
    expect,
  });
  const trusted: Verdict = { verdict: 'trusted', reason: null };
  const refused = (reason: string): Verdict => ({ verdict: 'refused', reason });
  const chain = [listed('rsa-2', 'active', [rsa2ByEd]), listed('ed25519', 'retired', [edByRsa]), listed('rsa', 'retired', [])];

  // Signed answers (validate, update check) as the server sends them: the payload's members beside the legacy
  // signature and the envelope of the same bytes (docs/signing.md, Envelopes; docs/releases.md, Checking for updates).
  const nonce = 'Y29uZm9ybWFuY2Utbm9uY2UtMDE';
  const subject = {
    nonce,
    license_key: license.license_key,
    machine_fingerprint: license.machine_fingerprint,
    checked_at: '2026-03-01T09:00:00.000Z',
  };
  const signedAnswer = (fields: Record<string, unknown>, key: KeyObject) => {
    const payload = { ...fields, ...subject, key_id: idOf(key) };
    const bytes = canonicalBytes(payload);
    const legacy = algorithmOfKey(key) === 'Ed25519' ? 'Ed25519:' : SIGNATURE_PREFIX;
    return {
      ...payload,
      signature: legacy + sign(digestOf(algorithmOfKey(key)!), bytes, key).toString('base64'),
      envelope: envelopeFor(bytes, key),
    };
  };
  const update = {
    update: {
      version: '1.4.0',
      channel: 'stable',
      notes: 'Faster start; fixes the receipt printer on Windows.',
      published_at: '2026-02-20T10:00:00.000Z',
      artifacts: [
        {
          filename: 'POS-Setup-1.4.0.exe',
          platform: 'win32',
          arch: 'x64',
          size: 104857600,
          sha256: createHash('sha256').update('POS-Setup-1.4.0.exe').digest('hex'),
          sha512: createHash('sha512').update('POS-Setup-1.4.0.exe').digest('hex'),
          url: 'https://licences.example.com/api/v1/releases/downloads/token/POS-Setup-1.4.0.exe',
          url_expires_at: '2026-03-01T09:10:00.000Z',
        },
      ],
    },
  };
  const updateAnswer = signedAnswer(update, keys.ed25519);
  const answerCase = (
    name: string,
    description: string,
    answer: unknown,
    expect: Verdict,
    overrides: Record<string, unknown> = {},
  ): ConformanceCase => ({
    name,
    kind: 'signed_answer',
    description,
    input: {
      trusted_keys: ['rsa', 'ed25519'],
      revoked_keys: [],
      answer,
      nonce,
      license_key: subject.license_key,
      machine_fingerprint: subject.machine_fingerprint,
      ...overrides,
    },
    expect,
  });
  const tamperedUpdate = {
    ...updateAnswer,
    envelope: {
      ...updateAnswer.envelope,
      payload: base64url(
        canonicalBytes({ ...update, update: { ...update.update, version: '9.9.9' }, ...subject, key_id: idOf(keys.ed25519) }),
      ),
    },
  };

  // A trial answer (POST /api/v1/trials): an activation answer of a TRIAL licence, grace 0 (docs/client-api.md, Trials).
  const trialLicense = {
    ...license,
    license_type: 'TRIAL',
    issued_at: '2026-03-01T09:00:00.000Z',
    activated_at: '2026-03-01T09:00:00.000Z',
    signed_at: '2026-03-01T09:00:00.000Z',
    expires_at: '2026-03-15T09:00:00.000Z',
    grace_days: 0,
    limits: { max_installations: 1 },
    policy: {
      heartbeat_timeout_seconds: null,
      max_deactivations_per_30_days: null,
      license_file_ttl_days: 30,
      max_uses: null,
      uses_period: 'none',
    },
    customer: { name: 'till-07', email: null },
    key_id: idOf(keys.ed25519),
  };
  const trialBytes = canonicalBytes(trialLicense);
  const trialAnswer = {
    license: trialLicense,
    signature: 'Ed25519:' + sign(null, trialBytes, keys.ed25519).toString('base64'),
    envelope: envelopeFor(trialBytes, keys.ed25519),
  };
  const trialCase = (
    name: string,
    description: string,
    now: string,
    fingerprint: string,
    expect: Verdict & { status?: string },
  ): ConformanceCase => ({
    name,
    kind: 'trial',
    description,
    input: { trusted_keys: ['rsa', 'ed25519'], answer: trialAnswer, now, machine_fingerprint: fingerprint, product: license.product },
    expect,
  });

  const cases: ConformanceCase[] = [
    envelopeCase('envelope-rsa', 'An RS256 envelope of a licence: decode, verify with the RSA key, parse.', rsaEnvelope, accept),
    envelopeCase('envelope-ed25519', 'An EdDSA envelope of the same licence, signed by the Ed25519 key.', edEnvelope, accept),
    envelopeCase(
      'envelope-payload-padded',
      'The payload re-encoded with = padding: one payload has one spelling.',
      { ...rsaEnvelope, payload: padded(rsaEnvelope.payload) },
      refuse('NON_CANONICAL_ENCODING'),
    ),
    envelopeCase(
      'envelope-payload-standard-alphabet',
      'The payload and signature re-encoded in the standard base64 alphabet (+ and /).',
      { ...rsaEnvelope, payload: standard(rsaEnvelope.payload), signature: standard(rsaEnvelope.signature) },
      refuse('NON_CANONICAL_ENCODING'),
    ),
    envelopeCase(
      'envelope-signature-padded',
      'The signature with = padding.',
      { ...edEnvelope, signature: padded(edEnvelope.signature) },
      refuse('NON_CANONICAL_ENCODING'),
    ),
    envelopeCase(
      'envelope-eddsa-over-rsa-key',
      'alg says EdDSA, key_id names the RSA key.',
      { ...rsaEnvelope, alg: 'EdDSA' },
      refuse('ALG_MISMATCH'),
    ),
    envelopeCase(
      'envelope-rs256-over-ed25519-key',
      'alg says RS256, key_id names the Ed25519 key.',
      { ...edEnvelope, alg: 'RS256' },
      refuse('ALG_MISMATCH'),
    ),
    envelopeCase('envelope-revoked-key', 'key_id names a key the server lists as revoked.', rsaEnvelope, refuse('KEY_REVOKED'), [
      idOf(keys.rsa),
    ]),
    envelopeCase(
      'envelope-unknown-key',
      'Signed by a key the client does not trust.',
      envelopeFor(canonicalBytes({ ...license, key_id: idOf(keys.stranger) }), keys.stranger),
      refuse('UNKNOWN_KEY'),
    ),
    envelopeCase(
      'envelope-payload-changed',
      'Another payload (the same licence as indented JSON) under the original signature.',
      { ...rsaEnvelope, payload: base64url(Buffer.from(JSON.stringify(rsaLicense, null, 1), 'utf8')) },
      refuse('INVALID_SIGNATURE'),
    ),
    envelopeCase(
      'envelope-missing-member',
      'No signature member.',
      { payload: rsaEnvelope.payload, alg: 'RS256', key_id: rsaEnvelope.key_id },
      refuse('MALFORMED_ENVELOPE'),
    ),
    envelopeCase(
      'envelope-extra-member',
      'An extra member beside the four.',
      { ...rsaEnvelope, kid: rsaEnvelope.key_id },
      refuse('MALFORMED_ENVELOPE'),
    ),
    envelopeCase('envelope-unknown-alg', 'alg none.', { ...rsaEnvelope, alg: 'none' }, refuse('MALFORMED_ENVELOPE')),
    envelopeCase(
      'envelope-payload-not-json',
      'Genuinely signed bytes that are not JSON: verified, then refused at parsing.',
      notJson,
      refuse('MALFORMED_PAYLOAD'),
    ),
    {
      name: 'license-file-v2',
      kind: 'license_file',
      description: 'A version 2 licence file: license, legacy signature and envelope agree.',
      input: {
        trusted_keys: ['rsa', 'ed25519'],
        revoked_keys: [],
        license_file: fileOf({ license: rsaLicense, signature: rsaSignature, envelope: rsaEnvelope }),
      },
      expect: accept,
    },
    {
      name: 'license-file-v2-disagrees',
      kind: 'license_file',
      description: 'A version 2 file whose license was edited (grace_days) while its envelope is intact.',
      input: {
        trusted_keys: ['rsa', 'ed25519'],
        revoked_keys: [],
        license_file: fileOf({ license: { ...rsaLicense, grace_days: 3650 }, signature: rsaSignature, envelope: rsaEnvelope }),
      },
      expect: refuse('PAYLOAD_MISMATCH'),
    },
    {
      name: 'license-file-v1',
      kind: 'license_file',
      description: 'A version 1 file (no envelope): a client that accepts envelopes only refuses it.',
      input: { trusted_keys: ['rsa', 'ed25519'], revoked_keys: [], license_file: fileOf({ license: rsaLicense, signature: rsaSignature }) },
      expect: refuse('UNSUPPORTED_FORMAT'),
    },
    trustCase(
      'trust-chain-rsa-ed25519-rsa',
      'Shipped the first RSA key only: RSA endorses Ed25519, Ed25519 endorses the second RSA key.',
      chain,
      'rsa-2',
      trusted,
    ),
    trustCase('trust-shipped-key', 'A shipped key that is not revoked.', chain, 'rsa', trusted),
    trustCase(
      'trust-unendorsed-key',
      "A stand-in server's own key, published without endorsements.",
      [listed('stranger', 'active', []), ...chain.slice(1)],
      'stranger',
      refused('UNENDORSED_KEY'),
    ),
    trustCase(
      'trust-endorser-unknown',
      'Endorsed only by a key neither shipped nor listed.',
      [listed('stranger', 'active', [endorse(keys.stranger, keys['loop-a'])]), ...chain.slice(1)],
      'stranger',
      refused('ENDORSER_UNKNOWN'),
    ),
    trustCase(
      'trust-endorser-revoked',
      'The only chain runs through a key listed as revoked.',
      [chain[0], listed('ed25519', 'revoked', [edByRsa]), chain[2]],
      'rsa-2',
      refused('ENDORSER_REVOKED'),
    ),
    trustCase(
      'trust-endorsement-loop',
      'Two keys endorse each other and nothing trusted endorses either.',
      [
        listed('loop-a', 'active', [endorse(keys['loop-a'], keys['loop-b'])]),
        listed('loop-b', 'retired', [endorse(keys['loop-b'], keys['loop-a'])]),
        chain[2],
      ],
      'loop-a',
      refused('ENDORSEMENT_LOOP'),
    ),
    trustCase(
      'trust-invalid-endorsement',
      'An endorsement by the shipped key that is really its endorsement of another key.',
      [listed('stranger', 'active', [{ key_id: idOf(keys.rsa), signature: edByRsa.signature }]), chain[2]],
      'stranger',
      refused('INVALID_ENDORSEMENT'),
    ),
    trustCase(
      'trust-root-past-revoked',
      'The chain runs through a revoked key, but the offline root endorses the active key.',
      [listed('rsa-2', 'active', [rsa2ByEd, endorse(keys['rsa-2'], keys.root)]), listed('ed25519', 'revoked', [edByRsa]), chain[2]],
      'rsa-2',
      trusted,
      ['root'],
    ),
    trustCase(
      'trust-shipped-but-revoked',
      'A shipped key the server lists as revoked is dropped.',
      [chain[0], chain[1], listed('rsa', 'revoked', [])],
      'rsa',
      refused('KEY_REVOKED'),
    ),
    answerCase(
      'answer-update-check',
      'An update check answer offering 1.4.0, EdDSA: decode, verify, then nonce, licence and machine.',
      updateAnswer,
      accept,
    ),
    answerCase(
      'answer-update-none',
      'An update check answer with nothing newer (update: null), RS256.',
      signedAnswer({ update: null }, keys.rsa),
      accept,
    ),
    answerCase(
      'answer-validate',
      'A signed validate answer, RS256.',
      signedAnswer({ valid: true, status: 'active', expires_at: null, revoked: false, grace_ends_at: null, code: null }, keys.rsa),
      accept,
    ),
    answerCase(
      'answer-nonce-mismatch',
      'A genuine answer to another request (a replay): the nonce differs.',
      updateAnswer,
      refuse('NONCE_MISMATCH'),
      {
        nonce: 'b3RoZXItcmVxdWVzdC1ub25jZQ',
      },
    ),
    answerCase('answer-other-machine', 'A genuine answer about another machine.', updateAnswer, refuse('WRONG_SUBJECT'), {
      machine_fingerprint: 'sha256:' + 'e'.repeat(64),
    }),
    answerCase(
      'answer-update-changed',
      'The offered version changed under the original signature.',
      tamperedUpdate,
      refuse('INVALID_SIGNATURE'),
    ),
    answerCase(
      'answer-unknown-key',
      'An answer signed by a key the client does not trust (a stand-in server).',
      signedAnswer(update, keys.stranger),
      refuse('UNKNOWN_KEY'),
    ),
    trialCase(
      'trial-active',
      'A trial licence kept like an activation and checked offline the next day.',
      '2026-03-02T09:00:00.000Z',
      String(license.machine_fingerprint),
      {
        ...accept,
        status: 'active',
      },
    ),
    trialCase(
      'trial-expired',
      'A trial past its expiry: grace 0, so refused at once.',
      '2026-03-15T09:00:01.000Z',
      String(license.machine_fingerprint),
      refuse('EXPIRED'),
    ),
    trialCase(
      'trial-other-machine',
      'A trial answer for another machine.',
      '2026-03-02T09:00:00.000Z',
      'sha256:' + 'e'.repeat(64),
      refuse('FINGERPRINT_MISMATCH'),
    ),
  ];

  return {
    vectors: {
      ed25519: { key_id: idOf(keys.ed25519), public_key_pem: pemOf(keys.ed25519), note: 'private key: test-keys.json, "ed25519"' },
      envelopes: [
        { name: 'envelope-rsa', payload_json: JSON.stringify(rsaLicense), envelope: rsaEnvelope, legacy_signature: rsaSignature },
        {
          name: 'envelope-ed25519',
          payload_json: JSON.stringify(edLicense),
          envelope: edEnvelope,
          legacy_signature: 'Ed25519:' + Buffer.from(edEnvelope.signature, 'base64url').toString('base64'),
        },
      ],
      endorsement_chain: {
        description:
          'RSA (shipped) endorses Ed25519, Ed25519 endorses RSA 2: each signature is over ASCII "licence-server-endorsement-v1:" + base64url(RFC 7638 thumbprint of the endorsed key), by the endorsing key.',
        keys: chain,
      },
    },
    conformance: {
      description:
        'Conformance cases every client runs (docs/signing.md, Envelopes; Endorsed rotation). keys: the test public keys by name (private halves: test-key.pem for "rsa", test-keys.json for the others; TEST KEYS ONLY). envelope: verify input.envelope trusting input.trusted_keys, with input.revoked_keys listed as revoked. license_file: the same for a licence file (a client that accepts envelopes only). key_trust: trust input.shipped_keys and input.root_keys, resolve endorsements over input.published, and say whether input.key_id is trusted. signed_answer: verify input.answer (a validate or update check answer) as the answer to a request with input.nonce about input.license_key on input.machine_fingerprint. trial: keep input.answer (a POST /trials answer) as this machine\'s activation (input.machine_fingerprint, input.product) and check it offline at input.now; expect.status is the accepted status. expect: verdict and reason (null when accepted).',
      keys: keyTable,
      cases,
    },
  };
}

if (require.main === module) main();
