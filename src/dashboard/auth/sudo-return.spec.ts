import type { Request, Response } from 'express';
import { CeremonyCookies, PASSKEY_CEREMONY, SSO_CEREMONY } from './ceremony-cookie';
import { safeReturnPath } from './sudo.controller';

describe('safeReturnPath (docs/security.md, Sudo mode)', () => {
  it('keeps a path of this site, with its query', () => {
    expect(safeReturnPath('/account/security')).toBe('/account/security');
    expect(safeReturnPath('/audit?staff=admin&page=2')).toBe('/audit?staff=admin&page=2');
  });

  it('never sends to another site, nor back to the confirm page itself', () => {
    for (const value of [
      '//evil.example/x',
      '/\\evil.example',
      'https://evil.example',
      'javascript:alert(1)',
      '',
      'staff',
      '/a b',
      '/account/sudo?return_to=/x',
    ])
      expect(safeReturnPath(value)).toBe('/dashboard');
  });
});

describe('CeremonyCookies (docs/security.md, Sessions)', () => {
  const jar = new Map<string, string>();
  const res = {
    cookie: (name: string, value: string) => jar.set(name, value),
    clearCookie: (name: string) => jar.delete(name),
  } as unknown as Response;
  const req = (cookie: string) => ({ headers: { cookie }, secure: true }) as unknown as Request;
  const cookies = new CeremonyCookies({ sessionSecret: 'a-session-secret-for-this-test-0123456789' });

  it('opens what it sealed, once, and nothing sealed under another key or for another cookie', () => {
    cookies.seal(req(''), res, PASSKEY_CEREMONY, { challenge: 'abc', purpose: 'sign-in' });
    const sealed = jar.get(PASSKEY_CEREMONY.name)!;
    expect(sealed).not.toContain('abc');
    expect(cookies.open(req(`${PASSKEY_CEREMONY.name}=${sealed}`), res, PASSKEY_CEREMONY)).toMatchObject({ challenge: 'abc' });
    expect(jar.has(PASSKEY_CEREMONY.name)).toBe(false);
    const other = new CeremonyCookies({ sessionSecret: 'another-secret-entirely-0123456789abcdef' });
    expect(other.open(req(`${PASSKEY_CEREMONY.name}=${sealed}`), res, PASSKEY_CEREMONY)).toBeNull();
    expect(cookies.open(req(`${SSO_CEREMONY.name}=${sealed}`), res, SSO_CEREMONY)).toBeNull();
    const flipped = `${sealed.slice(0, 20)}${sealed[20] === 'A' ? 'B' : 'A'}${sealed.slice(21)}`;
    expect(cookies.open(req(`${PASSKEY_CEREMONY.name}=${flipped}`), res, PASSKEY_CEREMONY)).toBeNull();
  });

  it('refuses an expired ceremony', () => {
    const now = Date.now();
    const spy = jest.spyOn(Date, 'now').mockReturnValue(now - PASSKEY_CEREMONY.ttlMs - 1);
    cookies.seal(req(''), res, PASSKEY_CEREMONY, { challenge: 'old' });
    spy.mockRestore();
    expect(cookies.open(req(`${PASSKEY_CEREMONY.name}=${jar.get(PASSKEY_CEREMONY.name)}`), res, PASSKEY_CEREMONY)).toBeNull();
  });
});
