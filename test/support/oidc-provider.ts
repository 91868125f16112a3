import { spawn } from 'node:child_process';
import { join } from 'node:path';

export interface TestOpenIdProvider {
  issuer: string;
  /** The account (sub) that the next sign-in at the provider logs in as. */
  signInAs: (sub: string) => Promise<void>;
  /** Replaces an account's claims at the provider (a role removed, ...). */
  setClaims: (sub: string, claims: Record<string, unknown>) => Promise<void>;
  stop: () => Promise<void>;
}

export interface OpenIdProviderOptions {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  /** Claims by sub (preferred_username, email, roles, ...). */
  accounts: Record<string, Record<string, unknown>>;
}

/** Starts a real OpenID provider (oidc-provider, test/support/oidc-provider-server.mjs) on 127.0.0.1 as a child process. */
export async function startOpenIdProvider(options: OpenIdProviderOptions): Promise<TestOpenIdProvider> {
  const child = spawn(process.execPath, ['--no-warnings', join(__dirname, 'oidc-provider-server.mjs')], {
    env: { PATH: process.env.PATH ?? '', OIDC_TEST_CONFIG: JSON.stringify(options) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const issuer = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the OpenID provider did not start:\n${output}`)), 30_000);
    const read = (d: Buffer) => {
      output += d.toString();
      const ready = /READY (\S+)/.exec(output);
      if (ready) {
        clearTimeout(timer);
        resolve(ready[1]);
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('exit', (code) => reject(new Error(`the OpenID provider exited (${code}):\n${output}`)));
  });
  return {
    issuer,
    signInAs: async (sub) => {
      const res = await fetch(`${issuer}/test/next-account`, { method: 'POST', body: sub });
      if (res.status !== 204) throw new Error(`next-account answered ${res.status}`);
    },
    setClaims: async (sub, claims) => {
      const res = await fetch(`${issuer}/test/claims`, { method: 'POST', body: JSON.stringify({ sub, claims }) });
      if (res.status !== 204) throw new Error(`claims answered ${res.status}`);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** A browser's visit to the provider: follows its redirects with its cookies until it sends the visitor back to `back`. */
export async function visitProvider(authorizationUrl: string, back: string): Promise<string> {
  const jar = new Map<string, string>();
  let url = authorizationUrl;
  for (let hop = 0; hop < 10; hop++) {
    if (url.startsWith(back)) return url;
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } });
    for (const cookie of res.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const eq = pair.indexOf('=');
      jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    const location = res.headers.get('location');
    if (!location) throw new Error(`the provider answered ${res.status} without a redirect: ${(await res.text()).slice(0, 500)}`);
    url = new URL(location, url).href;
  }
  throw new Error('too many redirects at the provider');
}
