import { channelsFor, electronChannelFile, filenameProblem, isSemVer, newestFirst } from './release-rules';

describe('release rules (docs/releases.md)', () => {
  it.each(['1.0.0', '0.0.1', '2.0.0-beta.1', '1.0.0-rc.1+build.5', '10.20.30'])('%s is SemVer 2.0', (v) => expect(isSemVer(v)).toBe(true));
  it.each(['v1.0.0', '1.0', '1.0.0.0', ' 1.0.0', '01.0.0', '1.0.0-', 'latest', '', '1.0.0 ', `1.0.0-${'a'.repeat(300)}`, 7])(
    '%p is not',
    (v) => expect(isSemVer(v)).toBe(false),
  );

  it('orders by SemVer precedence, prereleases below their release', () => {
    const order = newestFirst([{ version: '1.0.0' }, { version: '1.10.0' }, { version: '1.2.0' }, { version: '1.10.0-beta.2' }, { version: '1.10.0-beta.10' }]);
    expect(order.map((r) => r.version)).toEqual(['1.10.0', '1.10.0-beta.10', '1.10.0-beta.2', '1.2.0', '1.0.0']);
  });

  it('a channel includes the more stable ones', () => {
    expect(channelsFor('stable')).toEqual(['stable']);
    expect(channelsFor('beta')).toEqual(['stable', 'beta']);
    expect(channelsFor('alpha')).toEqual(['stable', 'beta', 'alpha']);
  });

  it.each(['App Setup 1.0.0.exe', 'app_1.0.0_amd64.AppImage', 'App-1.0.0-arm64-mac.zip', 'app.app.tar.gz', 'App (x64).msi'])('%s is a filename', (n) =>
    expect(filenameProblem(n)).toBeUndefined(),
  );
  it.each(['../etc/passwd', '..', 'a/b', 'a\\b', '.hidden', ' lead', 'a..b', '', 'x'.repeat(201), 'nul\u0000', 'new\nline', '%2e%2e', 'a:b'])(
    '%p is refused',
    (n) => expect(filenameProblem(n)).toBeDefined(),
  );

  it('maps electron-updater channel files', () => {
    expect(electronChannelFile('latest.yml')).toEqual({ channel: 'stable', platform: 'win32', arches: null });
    expect(electronChannelFile('beta-mac.yml')).toEqual({ channel: 'beta', platform: 'darwin', arches: null });
    expect(electronChannelFile('latest-linux.yml')).toEqual({ channel: 'stable', platform: 'linux', arches: ['x64'] });
    expect(electronChannelFile('alpha-linux-arm64.yml')).toEqual({ channel: 'alpha', platform: 'linux', arches: ['arm64'] });
    expect(electronChannelFile('latest.json')).toBeNull();
    expect(electronChannelFile('../latest.yml')).toBeNull();
  });
});
