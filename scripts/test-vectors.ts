import { createPrivateKey, createPublicKey, generateKeyPairSync, sign } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalBytes, keyIdOf, SIGNATURE_PREFIX } from '../src/signing/license-signature';

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
  writeFileSync(join(sourceDir, 'vectors.json'), JSON.stringify(document, null, 2) + '\n');
  console.log(`wrote ${vectors.length} vectors and ${answers.length} validate answers (key ${keyId}) to ${sourceDir}`);
}

if (require.main === module) main();
