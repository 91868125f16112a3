import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/** What a signed download link grants: one artifact, to one licence, until `expiresAt` (unix seconds). */
export interface DownloadGrant {
  artifactId: number;
  licenseId: number;
  expiresAt: number;
}

/** Numbers as the server writes them: no leading zero, so one grant has one token (`05.1...` is not `5.1...`). */
const TOKEN = /^(0|[1-9]\d{0,9})\.(0|[1-9]\d{0,9})\.(0|[1-9]\d{0,11})\.([A-Za-z0-9_-]{43})$/;

/**
 * Signed short-lived download links (docs/releases.md, Download links): `artifact.licence.expiry.mac`, the mac an
 * HMAC-SHA256 under a key derived from KEYRING_SECRET (so every instance of a deployment accepts every link).
 */
export class DownloadLinks {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'licence-server', 'release-download-links-v1', 32));
  }

  private mac(artifactId: number, licenseId: number, expiresAt: number): Buffer {
    return createHmac('sha256', this.key).update(`${artifactId}.${licenseId}.${expiresAt}`).digest();
  }

  token(grant: DownloadGrant): string {
    const { artifactId, licenseId, expiresAt } = grant;
    return `${artifactId}.${licenseId}.${expiresAt}.${this.mac(artifactId, licenseId, expiresAt).toString('base64url')}`;
  }

  /** The grant of a well-formed, untampered, unexpired token; null otherwise (one constant-time comparison). */
  verify(token: string, nowSeconds: number): DownloadGrant | null {
    const m = TOKEN.exec(token);
    if (!m) return null;
    const grant = { artifactId: Number(m[1]), licenseId: Number(m[2]), expiresAt: Number(m[3]) };
    const given = Buffer.from(m[4], 'base64url');
    const expected = this.mac(grant.artifactId, grant.licenseId, grant.expiresAt);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    return grant.expiresAt >= nowSeconds ? grant : null;
  }
}
