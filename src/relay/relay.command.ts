import { Command, InvalidArgumentError } from 'commander';
import { armorJson, POOL_REQUEST_LABEL, PoolRequest } from './pool-file';
import { ensureDataDir, loadOrCreateKey, relayFingerprint } from './relay-identity';
import { relayConfig, RelayEnvironment, RelayStartError, startRelay } from './relay-server';

const MAX_SEATS = 100_000;

function seatsOption(text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < 1 || value > MAX_SEATS) throw new InvalidArgumentError(`must be an integer from 1 to ${MAX_SEATS}`);
  return value;
}

/** The relay's variables (docs/relay.md, Configuration), each named: the relay reads nothing else from its environment. */
function relayEnvironment(): RelayEnvironment {
  return {
    RELAY_DATA_DIR: process.env.RELAY_DATA_DIR,
    RELAY_POOL_FILE: process.env.RELAY_POOL_FILE,
    RELAY_VENDOR_KEYS: process.env.RELAY_VENDOR_KEYS,
    PORT: process.env.PORT,
    RELAY_LEASE_SECONDS: process.env.RELAY_LEASE_SECONDS,
    RELAY_RATE_LIMIT: process.env.RELAY_RATE_LIMIT,
  };
}

/** Fails the command with one clear line and a non-zero exit (docs/relay.md). */
function fail(message: string): never {
  process.stderr.write(`relay: ${message}\n`);
  process.exit(1);
}

/**
 * `relay init` and `relay start` (docs/relay.md): the relay is set up offline from a pool request and started from
 * its data folder, the vendor's pool file and the vendor's keys.
 */
export function registerRelayCommands(program: Command): Command {
  const relay = program
    .command('relay')
    .description("Lend a licence's seats to the machines of a network with no connection to the vendor");

  relay
    .command('init')
    .description("Make the relay's key (once) and print its pool request for the vendor")
    .requiredOption('--data <dir>', "the relay's data folder (made with mode 0700; the private key stays here)")
    .requiredOption('--license <key>', 'the licence key whose seats the relay lends')
    .option('--seats <n>', 'seats to ask for', seatsOption, 1)
    .action((options: { data: string; license: string; seats: number }) => {
      const licenseKey = options.license.trim().toUpperCase();
      if (!licenseKey) fail('--license must be a licence key');
      try {
        ensureDataDir(options.data);
        const identity = loadOrCreateKey(options.data, true);
        const request: PoolRequest = {
          license_key: licenseKey,
          relay_fingerprint: relayFingerprint(),
          relay_public_key: identity.publicKeyPem,
          seats: options.seats,
        };
        process.stdout.write(armorJson(POOL_REQUEST_LABEL, request));
      } catch (err) {
        fail((err as Error).message);
      }
    });

  relay
    .command('start')
    .description(
      'Serve the relay API from a pool file the vendor issued (flags or RELAY_DATA_DIR, RELAY_POOL_FILE, RELAY_VENDOR_KEYS, PORT)',
    )
    .option('--data <dir>', "the relay's data folder (RELAY_DATA_DIR)")
    .option('--pool <file>', 'the pool file (RELAY_POOL_FILE)')
    .option('--vendor-keys <file>', "the vendor's keys as a JWK Set file (RELAY_VENDOR_KEYS)")
    .action(async (options: { data?: string; pool?: string; vendorKeys?: string }) => {
      try {
        const running = await startRelay(relayConfig(options, relayEnvironment()));
        const { pool } = running;
        console.log(
          `relay: pool ${pool.pool_id} of ${pool.license.license_key}, ${pool.seats} seats until ${pool.expires_at}, listening on port ${running.port}`,
        );
        // The command lasts as long as the relay serves: it returns once a signal has closed the server, so whoever
        // runs it (licence-server exits with the command's code) does not end the relay early.
        await new Promise<void>((resolve) => {
          const stop = () => void running.close().then(resolve);
          process.once('SIGTERM', stop);
          process.once('SIGINT', stop);
        });
      } catch (err) {
        if (err instanceof RelayStartError) fail(err.message);
        fail(`cannot start: ${(err as Error).message}`);
      }
    });
  return program;
}
