import { DownloadLinks } from './download-links';

describe('DownloadLinks (docs/releases.md, Download links)', () => {
  const links = new DownloadLinks('a-secret-of-at-least-thirty-two-characters');
  const grant = { artifactId: 7, licenseId: 42, expiresAt: 2_000_000_000 };

  it('verifies its own token until it expires', () => {
    const token = links.token(grant);
    expect(links.verify(token, 1_999_999_999)).toEqual(grant);
    expect(links.verify(token, 2_000_000_000)).toEqual(grant);
    expect(links.verify(token, 2_000_000_001)).toBeNull();
  });

  it('refuses a token with any part changed', () => {
    const [a, l, e, mac] = links.token(grant).split('.');
    expect(links.verify([8, l, e, mac].join('.'), 0)).toBeNull();
    expect(links.verify([a, 43, e, mac].join('.'), 0)).toBeNull();
    expect(links.verify([a, l, Number(e) + 1, mac].join('.'), 0)).toBeNull();
    expect(links.verify([a, l, e, (mac[0] === 'A' ? 'B' : 'A') + mac.slice(1)].join('.'), 0)).toBeNull();
    expect(links.verify('garbage', 0)).toBeNull();
  });

  it('refuses a number written another way (a leading zero): one grant has one token', () => {
    const [a, l, e, mac] = links.token(grant).split('.');
    expect(links.verify([`0${a}`, l, e, mac].join('.'), 0)).toBeNull();
    expect(links.verify([a, `00${l}`, e, mac].join('.'), 0)).toBeNull();
    expect(links.verify([a, l, `0${e}`, mac].join('.'), 0)).toBeNull();
    expect(links.verify([`+${a}`, l, e, mac].join('.'), 0)).toBeNull();
    // Zero itself is written "0".
    const zero = links.token({ artifactId: 0, licenseId: 42, expiresAt: 2_000_000_000 });
    expect(links.verify(zero, 0)).toEqual({ artifactId: 0, licenseId: 42, expiresAt: 2_000_000_000 });
  });

  it('refuses a token signed under another secret', () => {
    expect(new DownloadLinks('another-secret-of-at-least-thirty-two-chars').verify(links.token(grant), 0)).toBeNull();
  });
});
