import { createInterface } from 'node:readline';
import { createOrResetUser } from '../src/staff/user-command';
import { isStaffRole, STAFF_ROLES, type StaffRole } from '../src/staff/roles';
import { passwordProblem, usernameProblem } from '../src/staff/users.service';
import { commandDatabase } from './command-database';

const USAGE = `usage: npm run user:create -- NAME [--role ${STAFF_ROLES.join('|')}]   (password from USER_PASSWORD, the terminal or stdin)`;

/**
 * `npm run user:create -- NAME [--role ROLE]`: creates a staff account (role owner unless given) or resets the password of
 * an existing one, whose role stays (docs/dashboard.md, Staff and roles). The password comes from USER_PASSWORD, else
 * from the terminal (asked twice, not echoed), else from the first line of stdin.
 */
async function main(): Promise<void> {
  const { username, role } = readArguments(process.argv.slice(2));
  const nameProblem = usernameProblem(username);
  if (nameProblem) throw new Error(nameProblem);
  const password = process.env.USER_PASSWORD ?? (await readPassword());
  const problem = passwordProblem(password);
  if (problem) throw new Error(problem);

  const database = await commandDatabase(process.env, (line) => console.log(line));
  try {
    const created = await createOrResetUser(database.url, username, password, role);
    console.log(
      created
        ? `Dashboard user "${username}" created with the role ${role}.`
        : `Password of dashboard user "${username}" reset; their open sessions have ended.`,
    );
  } finally {
    await database.release();
  }
}

/** NAME and an optional `--role ROLE` (or `--role=ROLE`), in either order. */
function readArguments(args: string[]): { username: string; role: StaffRole } {
  let role: string = 'owner';
  const names: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--role') role = args[++i] ?? '';
    else if (args[i].startsWith('--role=')) role = args[i].slice('--role='.length);
    else names.push(args[i]);
  }
  if (names.length !== 1) throw new Error(USAGE);
  if (!isStaffRole(role)) throw new Error(`the role must be one of ${STAFF_ROLES.join(', ')}`);
  return { username: names[0], role };
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
