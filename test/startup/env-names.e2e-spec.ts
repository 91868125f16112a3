import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { getMetadataStorage } from 'class-validator';
import { prepareRuntime } from '../../src/bootstrap';
import { ConfigError } from '../../src/config/config.error';
import { EnvironmentVariables } from '../../src/config/env.schema';

/**
 * Configuration as deployed (docs/configuration.md, Variables): the documented table, the validated schema and the names
 * the server reads from its environment are one list. A name read but undocumented, documented but never read (the
 * Paddle and Lemon Squeezy secrets were validated but never copied from the environment, so their routes stayed 404),
 * or validated but never read fails here. Variables only a library reads (configuration.md, Read by libraries) are
 * outside the list: their own table, not this one.
 */

const ROOT = join(__dirname, '..', '..');
const NAME = /^[A-Z][A-Z0-9_]*$/;

/** Set by the primary for its workers (src/cluster/messages.ts), never by an operator: not configuration. */
// Also read by the code but not server settings: the cluster's hand-over to its workers, and the password the operator
// command `licence-server user create|reset` takes (docs/deployment.md, The licence-server command).
const INTERNAL = new Set(['LICENCE_SERVER_WORKER_CONFIG', 'USER_PASSWORD']);

/** The first table under the heading (consecutive `|` lines). */
function firstTable(file: string, heading: string): string[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const start = lines.findIndex((line) => line === heading);
  if (start < 0) throw new Error(`${file}: no "${heading}"`);
  const first = lines.findIndex((line, i) => i > start && line.startsWith('|'));
  const end = lines.findIndex((line, i) => i > first && !line.startsWith('|'));
  return lines.slice(first + 2, end < 0 ? undefined : end);
}

function documentedNames(file: string, heading: string): string[] {
  const names: string[] = [];
  for (const row of firstTable(file, heading)) {
    for (const [, token] of row.split('|')[1].matchAll(/`([^`]+)`/g)) {
      if (!NAME.test(token)) throw new Error(`${file}: write each variable out in full, not \`${token}\``);
      names.push(token);
    }
  }
  return names;
}

/** Every property of EnvironmentVariables that carries a check. */
function schemaNames(): string[] {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(EnvironmentVariables, '', true, false);
  return [...new Set(metadata.map((m) => m.propertyName))];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
  });
}

/**
 * Reads of `process.env` in src/ outside the start-up path: `process.env.NAME` and `process.env['NAME']` name what they
 * read; the hand-overs of the whole object are main.ts's `prepareRuntime(process.env`, measured below, and the operator
 * command's `commandDatabase(process.env` (src/cli/), which passes it to the same path. Any other use
 * is a way of reading the environment this test does not know: it fails until the test learns it.
 */
function namesReadInSource(dir = 'src', skip: string[] = [RELAY_DIR]): { names: string[]; unknown: string[] } {
  const names: string[] = [];
  const unknown: string[] = [];
  for (const file of sourceFiles(join(ROOT, dir)).filter((f) => !skip.some((s) => f.startsWith(join(ROOT, s))))) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/process\.env\b(.{0,40})/g)) {
      const rest = match[1];
      const before = text.slice(Math.max(0, match.index - 20), match.index);
      const named = /^\.([A-Za-z_][A-Za-z0-9_]*)/.exec(rest) ?? /^\[\s*['"]([^'"]+)['"]\s*\]/.exec(rest);
      if (named) names.push(named[1]);
      else if (/^\[\s*WORKER_CONFIG_ENV\s*\]/.test(rest)) names.push('LICENCE_SERVER_WORKER_CONFIG');
      else if (
        !(relative(ROOT, file) === join('src', 'main.ts') && /prepareRuntime\($/.test(before)) &&
        // The operator command hands the whole environment to the same start-up path (validateEnv, prepareRuntime).
        !(relative(ROOT, file).startsWith(join('src', 'cli')) && /commandDatabase\($/.test(before))
      ) {
        unknown.push(`${relative(ROOT, file)}: process.env${rest.split('\n')[0]}`);
      }
    }
  }
  return { names, unknown };
}

/** The names `prepareRuntime` (what main.ts runs first) reads from the environment object it is handed. */
async function namesReadAtStartUp(): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'licence-env-names-'));
  const read = new Set<string>();
  // Port 1 on loopback refuses the connection: the run stops at the migrations, after every variable was read.
  const base: NodeJS.ProcessEnv = { DATA_DIR: dataDir, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' };
  const env = new Proxy(base, {
    get: (target, key) => (typeof key === 'string' && read.add(key), target[key as string]),
    has: (target, key) => (typeof key === 'string' && read.add(key), key in target),
    ownKeys: () => {
      throw new Error('the start-up enumerated the whole environment: its names cannot be listed');
    },
  });
  try {
    await expect(prepareRuntime(env, () => undefined)).rejects.toThrow(ConfigError);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  return [...read];
}

/** The relay is its own program with its own variables (docs/relay.md, Configuration), listed there, not here. */
const RELAY_DIR = join('src', 'relay');

const sorted = (names: Iterable<string>) => [...new Set(names)].sort();

describe('configuration names (docs/configuration.md, Variables)', () => {
  it('the documented table, the validated schema and the names the server reads are one list', async () => {
    const documented = sorted(documentedNames('docs/configuration.md', '## Variables'));
    const schema = sorted(schemaNames());
    const source = namesReadInSource();
    expect(source.unknown).toEqual([]);
    const read = sorted([...(await namesReadAtStartUp()), ...source.names].filter((name) => !INTERNAL.has(name)));
    expect({ read, schema }).toEqual({ read: documented, schema: documented });
  }, 60_000);

  it("the relay's variables: docs/relay.md's table is the names src/relay/ reads", () => {
    const source = namesReadInSource(RELAY_DIR, []);
    expect(source.unknown).toEqual([]);
    expect(sorted(source.names)).toEqual(sorted(documentedNames('docs/relay.md', '## Configuration')));
  });

  it("README's Configuration table names the same variables", () => {
    expect(sorted(documentedNames('README.md', '## Configuration'))).toEqual(
      sorted(documentedNames('docs/configuration.md', '## Variables')),
    );
  });
});
