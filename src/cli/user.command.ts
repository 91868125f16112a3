import { type Command, Option } from 'commander';
import { createInterface } from 'node:readline';
import { isStaffRole, STAFF_ROLES, type StaffRole } from '../staff/roles';
import { CommandError, lazy, type Output } from './output';
import type * as CommandDatabaseModule from './command-database';
import type * as UserCommandModule from '../staff/user-command';
import type * as UsersServiceModule from '../staff/users.service';

// The use cases load the database layer and Argon2: imported when a command runs, so `--help` starts at once.
const staff = () => lazy<typeof UserCommandModule>('../staff/user-command');
const rules = () => lazy<typeof UsersServiceModule>('../staff/users.service');

const PASSWORD_SOURCE = 'the password comes from USER_PASSWORD, else it is asked twice on the terminal, else read from stdin';

/**
 * `licence-server user create|reset` (docs/dashboard.md, Staff and roles): staff accounts from the command line,
 * audited as `staff.joined` / `staff.password_reset` by the system like any change.
 */
export function registerUserCommands(program: Command, output: Output): void {
  const user = program.command('user').description('create a staff account or reset its password');
  user
    .command('create')
    .description(`create a staff account (${PASSWORD_SOURCE})`)
    .argument('<name>', 'the username: 1-64 letters, digits or _.@-')
    .addOption(new Option('--role <role>', 'its role').choices(STAFF_ROLES).default('owner'))
    .option('--products <codes>', 'limit it to these products (codes, comma-separated); default: every product')
    // `npm run user:create -- NAME` of earlier versions creates or resets: kept for it, not shown.
    .addOption(new Option('--or-reset').hideHelp())
    .action(async (name: string, options: { role: StaffRole; products?: string; orReset?: boolean }) => {
      checkName(name);
      if (!isStaffRole(options.role)) throw new CommandError(`the role must be one of ${STAFF_ROLES.join(', ')}`);
      const productCodes = (options.products ?? '')
        .split(',')
        .map((code) => code.trim())
        .filter(Boolean);
      if (options.products !== undefined && productCodes.length === 0) throw new CommandError('--products needs product codes');
      const password = await readPassword();
      await withDatabase(output, async (url) => {
        const { createOrResetUser, createUser } = staff();
        if (options.orReset && productCodes.length === 0) {
          const created = await createOrResetUser(url, name, password, options.role);
          output.out(created ? `Staff account "${name}" created with the role ${options.role}.` : resetMessage(name));
          return;
        }
        await createUser(url, { username: name, password, role: options.role, productCodes });
        const limited = productCodes.length ? `, limited to ${productCodes.join(', ')}` : '';
        output.out(`Staff account "${name}" created with the role ${options.role}${limited}.`);
      });
    });
  user
    .command('reset')
    .description(`reset the password of a staff account, ending its sessions (${PASSWORD_SOURCE})`)
    .argument('<name>', 'the username')
    .action(async (name: string) => {
      checkName(name);
      const password = await readPassword();
      await withDatabase(output, async (url) => {
        await staff().resetUserPassword(url, name, password);
        output.out(resetMessage(name));
      });
    });
}

const resetMessage = (name: string) => `Password of staff account "${name}" reset; their open sessions have ended.`;

function checkName(name: string): void {
  const problem = rules().usernameProblem(name);
  if (problem) throw new CommandError(problem);
}

async function withDatabase(output: Output, work: (url: string) => Promise<void>): Promise<void> {
  const { commandDatabase } = lazy<typeof CommandDatabaseModule>('./command-database');
  const database = await commandDatabase(process.env, output.info);
  try {
    await work(database.url);
  } catch (err) {
    // The use case's refusals (a taken name, an unknown product) are one line for the operator.
    throw new CommandError((err as Error).message);
  } finally {
    await database.release();
  }
}

async function readPassword(): Promise<string> {
  const password = process.env.USER_PASSWORD ?? (await askPassword());
  const problem = rules().passwordProblem(password);
  if (problem) throw new CommandError(problem);
  return password;
}

async function askPassword(): Promise<string> {
  if (!process.stdin.isTTY) {
    const lines = createInterface({ input: process.stdin });
    for await (const line of lines) return line;
    return '';
  }
  const first = await askHidden('Password: ');
  if ((await askHidden('Repeat it: ')) !== first) throw new CommandError('the passwords differ');
  return first;
}

/** Asks on the terminal without echoing what is typed. */
function askHidden(question: string): Promise<string> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    const output = rl as unknown as { _writeToOutput: (s: string) => void };
    let asked = false;
    output._writeToOutput = (s: string) => {
      if (!asked) process.stderr.write(s);
    };
    rl.question(question, (answer) => {
      rl.close();
      process.stderr.write('\n');
      resolve(answer);
    });
    asked = true;
  });
}
