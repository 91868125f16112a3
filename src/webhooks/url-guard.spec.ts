import { isPublicAddress, Resolver, resolveWebhookTarget, urlShapeProblem } from './url-guard';

// Pure: literal hosts never reach the resolver, and this one fails the test if anything asks it.
const noDns: Resolver = async (host) => {
  throw new Error(`DNS was asked for ${host}`);
};

describe('webhook URL guard (SSRF): addresses', () => {
  it.each([
    // IPv4
    '127.0.0.1',
    '127.8.9.10',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '192.0.2.1',
    '198.18.0.1',
    '240.0.0.1',
    // IPv6 outside global unicast
    '::1',
    '::',
    'fd00:ec2::254',
    'fc00::1',
    'fe80::1',
    'fe80::1%eth0',
    'fec0::1',
    'ff02::1',
    '100::1',
    // IPv4 inside IPv6: mapped (judged by the IPv4 part), compatible (::/96), SIIT, NAT64, 6to4, Teredo
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
    '::ffff:0:7f00:1',
    '::127.0.0.1',
    '::7f00:1',
    '::a00:1',
    '::a9fe:a9fe',
    '::8.8.8.8',
    '64:ff9b::a00:1',
    '64:ff9b::8.8.8.8',
    '64:ff9b:1::a00:1',
    '2002:7f00:1::',
    '2002:a00:1::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    // Special ranges inside 2000::/3: documentation, benchmarking, ORCHID
    '2001:db8::1',
    '3fff::1',
    '2001:2::1',
    '2001:10::1',
    '2001:20::1',
    // Not an address
    'localhost',
    '',
  ])('%s is not public', (address) => expect(isPublicAddress(address)).toBe(false));

  it.each(['93.184.216.34', '8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001:82b::200e', '::ffff:8.8.8.8'])(
    '%s is public',
    (address) => expect(isPublicAddress(address)).toBe(true),
  );
});

describe('webhook URL guard (SSRF): URLs with literal hosts, as URL parsing normalises them', () => {
  it.each([
    ['http://[::127.0.0.1]/', '::7f00:1'],
    ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1'],
    ['http://[0:0:0:0:0:ffff:127.0.0.1]/', '::ffff:7f00:1'],
    ['http://[::ffff:169.254.169.254]/', '::ffff:a9fe:a9fe'],
    ['http://[::a9fe:a9fe]/latest/meta-data/', '::a9fe:a9fe'],
    ['http://[64:ff9b::10.0.0.1]/', '64:ff9b::a00:1'],
    ['http://[2002:7f00:1::]/', '2002:7f00:1::'],
    ['http://[fd00::1]:8080/', 'fd00::1'],
    ['http://[::1]:8080/', '::1'],
    ['http://0x7f.1/', '127.0.0.1'],
    ['http://2130706433/', '127.0.0.1'],
    ['http://017700000001/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['http://127.1/', '127.0.0.1'],
    ['http://10.1/', '10.0.0.1'],
    ['http://3232235777/', '192.168.1.1'],
    ['http://0xa9fea9fe/', '169.254.169.254'],
    ['http://0/', '0.0.0.0'],
  ])('%s is refused (%s)', async (url, normalised) => {
    expect(await resolveWebhookTarget(url, false, noDns)).toEqual({ problem: expect.stringContaining(`url resolves to ${normalised},`) });
  });

  it('a zone id is not a valid URL host', async () => {
    expect(await resolveWebhookTarget('http://[fe80::1%25eth0]/', false, noDns)).toEqual({ problem: expect.stringContaining('absolute') });
  });

  it.each([
    ['http://[::127.0.0.1]/', '::7f00:1'],
    ['http://0x7f.1/', '127.0.0.1'],
  ])('WEBHOOK_ALLOW_PRIVATE_NETWORKS lets %s through', async (url, address) => {
    expect(await resolveWebhookTarget(url, true, noDns)).toMatchObject({ address });
  });

  it.each([
    ['https://93.184.216.34/hook', '93.184.216.34', 4],
    ['https://[2606:4700:4700::1111]/hook', '2606:4700:4700::1111', 6],
    ['https://[::ffff:8.8.8.8]/hook', '::ffff:808:808', 6],
  ])('%s is accepted', async (url, address, family) => {
    expect(await resolveWebhookTarget(url, false, noDns)).toMatchObject({ address, family });
  });
});

describe('webhook URL guard (SSRF)', () => {
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
