import { Client } from 'pg';
import { embeddedSharedBuffersMb, SOCKET_PATH_MAX_BYTES, socketPlan, socketUrl } from './embedded-settings';

describe('embedded PostgreSQL shared_buffers', () => {
  const GiB = 2 ** 30;
  it('is an eighth of the memory between 128 MB and 1 GB', () => {
    expect(embeddedSharedBuffersMb(4 * GiB)).toBe(512);
    expect(embeddedSharedBuffersMb(2 * GiB)).toBe(256);
  });
  it('never goes below PostgreSQL default nor above 1 GB', () => {
    expect(embeddedSharedBuffersMb(512 * 2 ** 20)).toBe(128);
    expect(embeddedSharedBuffersMb(64 * GiB)).toBe(1024);
  });
});

describe('embedded PostgreSQL Unix socket', () => {
  it('goes in the data folder when its path fits in 107 bytes', () => {
    const dir = '/var/lib/licence-server/postgres';
    expect(socketPlan(dir, 54321)).toEqual({ dir, path: `${dir}/.s.PGSQL.54321` });
  });
  it('takes a path of exactly 107 bytes and refuses 108: the server then connects over TCP and says why', () => {
    const fits = `/${'d'.repeat(107 - '/'.length - '/.s.PGSQL.54321'.length)}`;
    expect(Buffer.byteLength(`${fits}/.s.PGSQL.54321`)).toBe(SOCKET_PATH_MAX_BYTES);
    expect(socketPlan(fits, 54321).dir).toBe(fits);
    const plan = socketPlan(`${fits}d`, 54321);
    expect(plan.dir).toBeUndefined();
    expect(plan).toMatchObject({ reason: expect.stringContaining('108 bytes long, over the limit of 107') });
  });
  it('counts bytes, not characters: a long non-ASCII folder name falls back to TCP', () => {
    const dir = `/srv/${'é'.repeat(45)}`; // 95 characters, 140 bytes with the socket's name
    expect(socketPlan(dir, 5432).dir).toBeUndefined();
  });
  it('refuses a folder name that unix_socket_directories cannot quote', () => {
    expect(socketPlan('/srv/a"b', 5432)).toMatchObject({ dir: undefined, reason: expect.stringContaining('double quote') });
  });
  it('builds the pg URL with host=<folder> and the port, which names the socket file', () => {
    const url = socketUrl('postgres', 'p@ss/word', '/srv/data dir/postgres', 5433, 'licence_server');
    expect(url).toBe('postgresql://postgres:p%40ss%2Fword@/licence_server?host=%2Fsrv%2Fdata%20dir%2Fpostgres&port=5433');
    // pg reads it as a socket connection (its `host` a folder) with the credentials decoded.
    const client = new Client({ connectionString: url });
    expect({ host: client.host, port: client.port, database: client.database, user: client.user, password: client.password }).toEqual({
      host: '/srv/data dir/postgres',
      port: 5433,
      database: 'licence_server',
      user: 'postgres',
      password: 'p@ss/word',
    });
  });
});
