#!/usr/bin/env node
/**
 * Adds the platform binaries the registry did not serve to package-lock.json, so `npm ci` accepts it everywhere.
 *
 * Packages such as @swc/core list one optional dependency per platform (darwin-arm64, win32-x64-msvc, ...). A lockfile
 * written where the registry (a mirror, a proxy) serves only some of them lacks the others, and `npm ci` then refuses
 * it on every machine ("Missing: @swc/core-darwin-arm64@ from lock file"). This writes the missing entries the way
 * npm would: the version the parent pins, the platform (os, cpu, libc) read from the package's name, and the flags of
 * a sibling binary. npm never fetches an entry whose platform does not match, and fetches it (over TLS, without a
 * recorded integrity) on the platform that needs it.
 *
 * Usage (see docs/deployment.md "Lockfile"): rm -rf node_modules package-lock.json && npm install && node scripts/complete-lockfile.js
 */
const { readFileSync, writeFileSync } = require('node:fs');

const OS = ['aix', 'android', 'darwin', 'freebsd', 'linux', 'netbsd', 'openbsd', 'openharmony', 'sunos', 'win32'];
const CPU = ['arm', 'arm64', 'ia32', 'loong64', 'mips64el', 'ppc64', 'riscv64', 's390x', 'wasm32', 'x64'];
const LIBC = { gnu: 'glibc', gnueabihf: 'glibc', musl: 'musl', musleabihf: 'musl' };
// What a platform binary's entry shares with its siblings (the rest comes from the name).
const SHARED = ['dev', 'devOptional', 'peer', 'license', 'engines'];

/** os, cpu and libc from a name like `@swc/core-linux-arm-gnueabihf` or `@unrs/resolver-binding-win32-x64-msvc`. */
function platformOf(name) {
  const parts = name.slice(name.lastIndexOf('/') + 1).split('-');
  const os = parts.find((p) => OS.includes(p));
  const cpu = parts.find((p) => CPU.includes(p));
  const libc = parts.map((p) => LIBC[p]).find(Boolean);
  if (!os || !cpu) return undefined;
  return { cpu: [cpu], ...(os === 'linux' && libc ? { libc: [libc] } : {}), os: [os] };
}

function complete(lockfile) {
  const packages = lockfile.packages;
  const added = [];
  const unknown = [];
  for (const [parentKey, parent] of Object.entries(packages)) {
    const optional = parent.optionalDependencies ?? {};
    const base = parentKey ? `${parentKey}/node_modules/` : 'node_modules/';
    const locate = (name) => [`${base}${name}`, `node_modules/${name}`].find((key) => packages[key]);
    const sibling = Object.keys(optional)
      .map(locate)
      .find((key) => key && platformOf(key));
    for (const [name, version] of Object.entries(optional)) {
      if (locate(name) || !/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(version)) continue; // present, or not an exact pin
      const platform = platformOf(name);
      if (!platform || !sibling) {
        unknown.push(`${name}@${version} (optional dependency of ${parentKey || 'the project'})`);
        continue;
      }
      const key = packages[`node_modules/${name}`] ? `${base}${name}` : `node_modules/${name}`;
      const fields = { version, ...platform, optional: true };
      for (const f of SHARED) if (f in packages[sibling]) fields[f] = packages[sibling][f];
      // npm's own order: version first, engines last, the rest alphabetical.
      const order = (f) => (f === 'version' ? '0' : f === 'engines' ? '2' : `1${f}`);
      packages[key] = Object.fromEntries(Object.entries(fields).sort(([a], [b]) => order(a).localeCompare(order(b))));
      added.push(`${name}@${version}`);
    }
  }
  lockfile.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
  return { added, unknown };
}

const file = process.argv[2] ?? 'package-lock.json';
const lockfile = JSON.parse(readFileSync(file, 'utf8'));
const { added, unknown } = complete(lockfile);
writeFileSync(file, JSON.stringify(lockfile, null, 2) + '\n');
console.log(
  added.length ? `Added ${added.length} platform binaries to ${file}:\n  ${added.join('\n  ')}` : `${file} lists every platform binary.`,
);
if (unknown.length) {
  console.error(`Missing optional dependencies whose platform cannot be read from the name (fix by hand):\n  ${unknown.join('\n  ')}`);
  process.exit(1);
}
