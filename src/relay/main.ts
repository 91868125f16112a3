import { Command } from 'commander';
import { registerRelayCommands } from './relay.command';

/** `node dist/src/relay/main.js relay init|start ...`: the relay's commands until `licence-server` carries them (docs/relay.md). */
const program = new Command('licence-server').description('Licence server: the relay');
registerRelayCommands(program);
void program.parseAsync(process.argv);
