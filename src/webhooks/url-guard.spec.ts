import { isPublicAddress, resolveWebhookTarget, urlShapeProblem } from './url-guard';

describe('webhook URL guard (SSRF)', () => {
  it.each([
    '127.0.0.1',
    '127.8.9.10',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '::1',
    '::',
    'fd00:ec2::254',
    'fe80::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
  ])('%s is not public', (address) => expect(isPublicAddress(address)).toBe(false));

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('%s is public', (address) =>
    expect(isPublicAddress(address)).toBe(true),
  );

  it.each([
    ['ftp://example.com/x', 'http or https'],
    ['not a url', 'absolute'],
    ['https://user:pw@example.com/', 'credentials'],
  ])('%s is refused by shape', (url, message) => expect(urlShapeProblem(url)).toContain(message));

  it('a host name that resolves to a private address is refused, even among public ones', async () => {
    const resolver = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.7', family: 4 },
    ];
    const result = await resolveWebhookTarget('https://hooks.example.com/x', false, resolver);
    expect(result).toEqual({ problem: expect.stringContaining('10.0.0.7') });
    const allowed = await resolveWebhookTarget('https://hooks.example.com/x', true, resolver);
    expect(allowed).toMatchObject({ address: '93.184.216.34', family: 4 });
  });

  it('a host name that does not resolve is refused', async () => {
    const resolver = async () => {
      throw new Error('ENOTFOUND');
    };
    expect(await resolveWebhookTarget('https://nowhere.invalid/', false, resolver)).toEqual({
      problem: expect.stringContaining('does not resolve'),
    });
  });

  it('IPv6 literals in brackets are checked', async () => {
    expect(await resolveWebhookTarget('http://[::1]:8080/', false)).toEqual({ problem: expect.stringContaining('::1') });
  });
});
