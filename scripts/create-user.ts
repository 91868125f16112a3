import { createInterface } from 'node:readline';
import { createOrResetUser } from '../src/staff/user-command';
import { passwordProblem, usernameProblem } from '../src/staff/users.service';
import { commandDatabase } from './command-database';

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
