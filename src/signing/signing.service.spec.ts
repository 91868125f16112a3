import { constants, createPublicKey, generateKeyPairSync, publicDecrypt, verify } from 'node:crypto';
import { keyIdOf, verifySignature } from './license-signature';
import { canonicalBytes, SIGNATURE_PREFIX, SigningService } from './signing.service';

describe('canonicalBytes (RFC 8785)', () => {
  it('sorts keys by UTF-16 code units, recursively, and drops whitespace', () => {
    expect(canonicalBytes({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } }).toString('utf8')).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
    // RFC 8785 3.2.3: "\u20ac" (€) sorts after "\r" and before the astral "😀" (surrogate pair D83D...).
    expect(canonicalBytes({ '😀': 3, '€': 2, '\r': 1 }).toString('utf8')).toBe('{"\\r":1,"€":2,"😀":3}');
  });

  it('serialises numbers and strings as ECMAScript does, and non-ASCII as UTF-8 bytes', () => {
    expect(canonicalBytes([1e21, 0.1, -0, 100, 1.5e-7]).toString('utf8')).toBe('[1e+21,0.1,0,100,1.5e-7]');
    expect(canonicalBytes('Šumadija "x"\n')).toEqual(Buffer.from('"Šumadija \\"x\\"\\n"', 'utf8'));
  });

  it('refuses values JSON cannot express', () => {
    expect(() => canonicalBytes(undefined)).toThrow(TypeError);
  });
});

describe('SigningService', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const key = { privateKey, publicKeyPem, keyId: keyIdOf(publicKey) };
  const service = new SigningService();
  const sign = (p: unknown) => service.sign(p, key.privateKey);
  const verifyOwn = (p: unknown, s: string) => verifySignature(p, s, key.publicKeyPem);
  const payload = { license_key: 'POS-1', limits: { max_installations: 1 }, customer: { name: 'Ćevapi', email: null }, key_id: key.keyId };

  it('signs RSASSA-PKCS1-v1_5 / SHA-256 over the canonical bytes, as RSA-SHA256:<standard padded base64>', async () => {
    const signature = await sign(payload);
    expect(signature).toMatch(/^RSA-SHA256:[A-Za-z0-9+/]{342}==$/);
    const raw = Buffer.from(signature.slice(SIGNATURE_PREFIX.length), 'base64');
    const publicKey = createPublicKey(key.publicKeyPem);
    expect(verify('sha256', canonicalBytes(payload), publicKey, raw)).toBe(true);
    // PKCS#1 v1.5 is deterministic and its padding shows the SHA-256 DigestInfo prefix.
    const decoded = publicDecrypt({ key: publicKey, padding: constants.RSA_PKCS1_PADDING }, raw);
    expect(decoded.subarray(0, 19).toString('hex')).toBe('3031300d060960864801650304020105000420');
    expect(await sign(payload)).toBe(signature);
  });

  it('gives the same signature whatever the member order', async () => {
    const reordered = { key_id: payload.key_id, customer: { email: null, name: 'Ćevapi' }, limits: payload.limits, license_key: 'POS-1' };
    expect(await sign(reordered)).toBe(await sign(payload));
  });

  it('verifySignature accepts its own signatures and rejects tampered payloads, signatures and prefixes', async () => {
    const signature = await sign(payload);
    expect(verifyOwn(payload, signature)).toBe(true);
    expect(verifyOwn({ ...payload, license_key: 'POS-2' }, signature)).toBe(false);
    expect(verifyOwn(payload, signature.replace('RSA-SHA256:', 'RSA-SHA1:'))).toBe(false);
    const raw = Buffer.from(signature.slice(SIGNATURE_PREFIX.length), 'base64');
    raw[0] ^= 1;
    expect(verifyOwn(payload, SIGNATURE_PREFIX + raw.toString('base64'))).toBe(false);
  });

  it('many signatures in flight at once each resolve to their own payload', async () => {
    const payloads = Array.from({ length: 20 }, (_, i) => ({ ...payload, license_key: `POS-${i}` }));
    const signatures = await Promise.all(payloads.map((p) => sign(p)));
    signatures.forEach((s, i) => expect(verifyOwn(payloads[i], s)).toBe(true));
    expect(new Set(signatures).size).toBe(20);
  });
});
