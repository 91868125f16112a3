import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { dropDatabase, newDatabaseName, skipCommitFlush, urlFor, withAdminClient } from '../support/test-database';

/**
 * A deployment on this machine for multi-process tests: its own database on the local
 * PostgreSQL (never the default databases), its own Redis key prefix, one shared signing key.
 */
export interface ClusterEnv {
  env: Record<string, string>;
  databaseUrl: string;
  apiKey: string;
  redis: Redis;
  cleanup: () => Promise<void>;
}

export const CLUSTER_PG_URL = process.env.CLUSTER_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const CLUSTER_REDIS_URL = process.env.CLUSTER_REDIS_URL ?? 'redis://127.0.0.1:6379';

export async function createClusterEnv(extra: Record<string, string> = {}): Promise<ClusterEnv> {
  const dir = mkdtempSync(join(tmpdir(), 'licence-cluster-'));
  const keyFile = join(dir, 'signing-key.pem');
  writeFileSync(keyFile, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }), {
    mode: 0o600,
  });
  const database = newDatabaseName('cluster');
  await withAdminClient(CLUSTER_PG_URL, async (c) => {
    await c.query(`CREATE DATABASE "${database}"`);
    // The servers under test crash, PostgreSQL does not: a commit need not wait for the disk (docs/testing.md).
    await skipCommitFlush(c, database);
  });
  const databaseUrl = urlFor(CLUSTER_PG_URL, database);
  const prefix = `licence-test:${database}:`;
  const redis = new Redis(CLUSTER_REDIS_URL, { keyPrefix: prefix, maxRetriesPerRequest: 1 });
  const apiKey = `cluster-test-key-${randomBytes(8).toString('hex')}`;
  return {
    apiKey,
    databaseUrl,
    redis,
    env: {
      DATABASE_URL: databaseUrl,
      REDIS_URL: CLUSTER_REDIS_URL,
      REDIS_KEY_PREFIX: prefix,
      DATA_DIR: dir,
      SIGNING_KEY_FILE: keyFile,
      API_KEY: apiKey,
      SESSION_SECRET: randomBytes(32).toString('hex'),
      KEYRING_SECRET: randomBytes(32).toString('hex'),
      ADMIN_USERNAME: 'admin',
      ADMIN_PASSWORD: 'cluster-admin-password',
      // The tests play several clients by sending X-Forwarded-For from loopback.
      TRUST_PROXY: 'loopback',
      ...extra,
    },
    cleanup: async () => {
      const keys = await redis.keys(`${prefix}*`);
      // ioredis adds keyPrefix to commands but KEYS returns full names: strip it before deleting.
      if (keys.length) await redis.del(...keys.map((k) => k.slice(prefix.length)));
      redis.disconnect();
      await dropDatabase(CLUSTER_PG_URL, database);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
