import { importJWK } from 'jose';
import { createPublicKey, generateKeyPairSync, KeyObject, sign, verify } from 'node:crypto';
import { publicJwkOf, pemOfJwk } from './jwk';
import { keyIdOf } from './license-signature';

describe('JWK export (GET /.well-known/jwks.json)', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const keyId = keyIdOf(pem);

  it('is an RFC 7517 RSA signing key named by key_id', async () => {
    const jwk = await publicJwkOf(pem, keyId);
    expect(jwk).toEqual({ kty: 'RSA', kid: keyId, alg: 'RS256', use: 'sig', n: expect.stringMatching(/^[A-Za-z0-9_-]{342}$/), e: 'AQAB' });
    expect(Object.keys(jwk)).not.toContain('d');
  });

  it('is the same key as the PEM: both directions, and through jose', async () => {
    const jwk = await publicJwkOf(publicKey, keyId);
    expect(pemOfJwk(jwk)).toBe(pem);
    expect(keyIdOf(pemOfJwk(jwk))).toBe(keyId);
    const viaJose = KeyObject.from(await importJWK(jwk, 'RS256'));
    expect(viaJose.export({ type: 'spki', format: 'pem' })).toBe(pem);
    expect(createPublicKey(pem).export({ format: 'jwk' })).toEqual({ kty: 'RSA', n: jwk.n, e: jwk.e });
  });

  it('verifies what the private key signed', async () => {
    const data = Buffer.from('{"a":1}');
    const signature = sign('sha256', data, privateKey);
    const fromJwk = createPublicKey({ key: { ...(await publicJwkOf(pem, keyId)) }, format: 'jwk' });
    expect(verify('sha256', data, fromJwk, signature)).toBe(true);
  });
});
