import { compare, parse } from 'semver';
import { RELEASE_CHANNELS, type ReleaseChannel } from './release.entities';

/** SemVer 2.0 as written (docs/releases.md, Versions): what the semver package parses strictly, without its leading "v". */
export function isSemVer(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 256 && /^\d\S*$/.test(value) && parse(value, { loose: false }) !== null;
}

/** Newest first by SemVer precedence (build metadata ignored, as SemVer says; ties keep their order). */
export function newestFirst<T extends { version: string }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => compare(b.version, a.version));
}

/** A client on `channel` is offered that channel and the more stable ones (alpha gets beta and stable too). */
export function channelsFor(channel: ReleaseChannel): readonly ReleaseChannel[] {
  return RELEASE_CHANNELS.slice(0, RELEASE_CHANNELS.indexOf(channel) + 1);
}

/** Node's platform and arch names the artifacts use (docs/releases.md, Uploading artifacts). */
export const PLATFORMS = ['linux', 'darwin', 'win32'] as const;
export const ARCHES = ['x64', 'arm64', 'ia32', 'arm', 'universal'] as const;

/**
 * An artifact's filename: letters, digits, space and `._+()-`, not starting with a dot or space, no "..", 1-200
 * characters. No slash of either kind, so a name never walks out of anything (it never names a stored file either).
 */
export function filenameProblem(name: string): string | undefined {
  if (name.length < 1 || name.length > 200) return 'filename must be 1-200 characters';
  if (!/^[A-Za-z0-9_(+-][A-Za-z0-9 ._+()-]*$/.test(name)) return 'filename may hold only letters, digits, space and ._+()- and must not start with a dot or space';
  if (name.includes('..')) return 'filename must not contain ".."';
  return undefined;
}

/** Tauri's `{{target}}` and `{{arch}}` in Node's names (docs/releases.md, Tauri). */
export const TAURI_TARGETS: Readonly<Record<string, string>> = { linux: 'linux', windows: 'win32', darwin: 'darwin' };
export const TAURI_ARCHES: Readonly<Record<string, string>> = { x86_64: 'x64', aarch64: 'arm64', i686: 'ia32', armv7: 'arm' };

/**
 * The platform and arches of an electron-updater channel file (docs/releases.md, electron-updater): `latest.yml`,
 * `latest-mac.yml`, `latest-linux.yml`, `latest-linux-arm64.yml`, and `beta`/`alpha` likewise. Null: not such a file.
 * Windows and macOS files list every arch (the updater picks its own); Linux has one file per arch.
 */
export function electronChannelFile(file: string): { channel: ReleaseChannel; platform: string; arches: string[] | null } | null {
  const m = /^(latest|beta|alpha)(-mac|-linux|-linux-arm64|-linux-armv7l)?\.yml$/.exec(file);
  if (!m) return null;
  const channel: ReleaseChannel = m[1] === 'latest' ? 'stable' : (m[1] as ReleaseChannel);
  switch (m[2]) {
    case '-mac':
      return { channel, platform: 'darwin', arches: null };
    case '-linux':
      return { channel, platform: 'linux', arches: ['x64'] };
    case '-linux-arm64':
      return { channel, platform: 'linux', arches: ['arm64'] };
    case '-linux-armv7l':
      return { channel, platform: 'linux', arches: ['arm'] };
    default:
      return { channel, platform: 'win32', arches: null };
  }
}
