import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { EMBEDDED_DATABASE_NAME, prepareRuntime } from '../src/bootstrap';
import { validateEnv } from '../src/config/env.schema';
import { createOrResetUser } from '../src/dashboard/user-command';
import { isProcessRunning } from '../src/database/embedded-database';
import { passwordProblem, usernameProblem } from '../src/dashboard/users.service';

/**
 * `npm run user:create -- NAME`: creates a dashboard user or resets its password. The password comes
 * from USER_PASSWORD, else from the terminal (asked twice, not echoed), else from the first line of stdin.
 */
async function main(): Promise<void> {
  const username = process.argv[2];
  if (!username || process.argv.length > 3)
    throw new Error('usage: npm run user:create -- NAME   (password from USER_PASSWORD, the terminal or stdin)');
  const nameProblem = usernameProblem(username);
  if (nameProblem) throw new Error(nameProblem);
  const password = process.env.USER_PASSWORD ?? (await readPassword());
  const problem = passwordProblem(password);
  if (problem) throw new Error(problem);

  const database = await commandDatabase(process.env, (line) => console.log(line));
  try {
    const created = await createOrResetUser(database.url, username, password);
    console.log(
      created ? `Dashboard user "${username}" created.` : `Password of dashboard user "${username}" reset; their open sessions have ended.`,
    );
  } finally {
    await database.release();
  }
}

/** The database a command-line tool should use, and how to let go of it afterwards. */
interface CommandDatabase {
  url: string;
  release: () => Promise<void>;
}

/**
 * DATABASE_URL when set. Otherwise the embedded PostgreSQL under DATA_DIR: the running server's
 * instance when there is one (read from its postmaster.pid, never stopped or restarted from here),
 * else started (and migrated) for the command and stopped after it.
 */
async function commandDatabase(env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<CommandDatabase> {
  const vars = validateEnv(env);
  if (vars.DATABASE_URL) return { url: vars.DATABASE_URL, release: () => Promise.resolve() };
  const dataDir = resolve(vars.DATA_DIR);
  const running = runningEmbeddedPort(join(dataDir, 'postgres'));
  const passwordFile = join(dataDir, 'postgres-password');
  if (running && existsSync(passwordFile)) {
    const password = encodeURIComponent(readFileSync(passwordFile, 'utf8').trim());
    return { url: `postgres://postgres:${password}@127.0.0.1:${running}/${EMBEDDED_DATABASE_NAME}`, release: () => Promise.resolve() };
  }
  const runtime = await prepareRuntime(env, log);
  return { url: runtime.config.databaseUrl, release: async () => runtime.embedded?.stop() };
}

/** Port of a live embedded PostgreSQL in `dir` (postmaster.pid: line 1 pid, line 4 port), if any. */
function runningEmbeddedPort(dir: string): number | undefined {
  try {
    const lines = readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n');
    const pid = Number(lines[0]);
    const port = Number(lines[3]);
    return Number.isInteger(pid) && pid > 0 && isProcessRunning(pid) && port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
}

async function readPassword(): Promise<string> {
  if (!process.stdin.isTTY) {
    const lines = createInterface({ input: process.stdin });
    for await (const line of lines) return line;
    return '';
  }
  const first = await askHidden('Password: ');
  if ((await askHidden('Repeat it: ')) !== first) throw new Error('the passwords differ');
  return first;
}

/** Asks on the terminal without echoing what is typed. */
function askHidden(question: string): Promise<string> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true });
    const output = rl as unknown as { _writeToOutput: (s: string) => void };
    let asked = false;
    output._writeToOutput = (s: string) => {
      if (!asked) process.stdout.write(s);
    };
    rl.question(question, (answer) => {
      rl.close();
      process.stdout.write('\n');
      resolve(answer);
    });
    asked = true;
  });
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
