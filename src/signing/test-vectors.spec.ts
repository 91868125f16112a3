import { createPrivateKey, createPublicKey, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalBytes, keyIdOf, verifySignature } from './license-signature';

interface Vector {
  name: string;
  payload_json: string;
  canonical_hex: string;
  signature: string;
}

/** docs/test-vectors must stay true for the server's own canonicalization and signing, or client authors check against lies. */
describe('docs/test-vectors', () => {
  const dir = join(__dirname, '..', '..', 'docs', 'test-vectors');
  const document = JSON.parse(readFileSync(join(dir, 'vectors.json'), 'utf8')) as {
    key_id: string;
    public_key_pem: string;
    vectors: Vector[];
  };
  const privateKey = createPrivateKey(readFileSync(join(dir, 'test-key.pem')));
  const publicKey = createPublicKey(readFileSync(join(dir, 'test-key.pub.pem')));

  it('publishes the test key pair and its key id', () => {
    expect(createPublicKey(privateKey).export({ type: 'spki', format: 'pem' })).toBe(document.public_key_pem);
    expect(keyIdOf(publicKey)).toBe(document.key_id);
  });

  it('covers the hard cases client authors get wrong', () => {
    const names = document.vectors.map((v) => v.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'emoji-and-astral',
        'combining-marks',
        'right-to-left',
        'controls-and-del',
        'large-integers',
        'member-order',
      ]),
    );
  });

  it.each(document.vectors.map((v) => [v.name, v] as const))('%s: canonical bytes and signature match', (_name, vector) => {
    const payload = JSON.parse(vector.payload_json) as unknown;
    const bytes = canonicalBytes(payload);
    expect(bytes.toString('hex')).toBe(vector.canonical_hex);
    expect(`RSA-SHA256:${sign('sha256', bytes, privateKey).toString('base64')}`).toBe(vector.signature);
    expect(verifySignature(payload, vector.signature, publicKey)).toBe(true);
  });

  it('a changed character fails every vector', () => {
    for (const vector of document.vectors) {
      const tampered = JSON.parse(vector.payload_json.replace('POS_RETAIL', 'POS_RETAIM')) as unknown;
      expect(verifySignature(tampered, vector.signature, publicKey)).toBe(false);
    }
  });

  it('DEL and U+2028 stay raw while U+0000..U+001F are escaped (where jq and language defaults differ)', () => {
    const vector = document.vectors.find((v) => v.name === 'controls-and-del')!;
    const text = Buffer.from(vector.canonical_hex, 'hex').toString('utf8');
    expect(text).toContain('a\\u0000b\\u0001c\\bd\\te\\nf\\u000bg\\fh\\ri\\u001fj\u007fk\u2028l\u2029m\\"n\\\\o/p');
  });
});
