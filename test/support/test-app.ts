import type { Server } from 'node:http';
import 'reflect-metadata';
import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { OpenAPIObject } from '@nestjs/swagger';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DestinationStream } from 'pino';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { AppModule } from '../../src/app.module';
import { configureApp } from '../../src/app.setup';
import { ExpressServerAdapter } from '../../src/common/http/express-server';
import { AppConfig } from '../../src/config/app-config';
import { conformant, OpenApiConformance } from './openapi-conformance';
import {
  createDatabaseFromTemplate,
  cutDatabase,
  dropDatabase,
  ENV_ADMIN_URL,
  ENV_SIGNING_KEY,
  ENV_TEMPLATE,
  newDatabaseName,
  restoreDatabase,
} from './test-database';

export const TEST_API_KEY = 'test-admin-key-0123456789abcdef';

export interface TestApp {
  app: INestApplication;
  config: AppConfig;
  dataSource: DataSource;
  databaseName: string;
  /** supertest against the app's HTTP server; every response is checked against the app's OpenAPI document */
  http: () => ReturnType<typeof request>;
  /** the app's OpenAPI document (GET /api/docs-json) */
  openApi: OpenAPIObject;
  /** supertest helpers that send the admin API key */
  admin: {
    get: (url: string) => request.Test;
    post: (url: string) => request.Test;
    put: (url: string) => request.Test;
  };
  /** raw SQL against this test file's database */
  // Ad-hoc rows of each test's own SQL, checked by that test's expectations; pass a row type where it helps.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  sql: <T = Record<string, any>>(query: string, params?: unknown[]) => Promise<T[]>;
  cutDatabase: () => Promise<void>;
  restoreDatabase: () => Promise<void>;
  close: () => Promise<void>;
}

let cachedConformance: { text: string; conformance: OpenApiConformance } | undefined;

/** One compiled checker per worker: every test app serves the same document. */
function openApiConformance(document: OpenAPIObject): OpenApiConformance {
  const text = JSON.stringify(document);
  if (cachedConformance?.text !== text) cachedConformance = { text, conformance: new OpenApiConformance(document) };
  return cachedConformance.conformance;
}

export function testConfig(databaseUrl: string, overrides: Partial<AppConfig> = {}): AppConfig {
  return {
    port: 0,
    dataDir: '/nonexistent-test-data-dir',
    databaseUrl,
    apiKeys: [TEST_API_KEY],
    adminUsername: 'admin',
    adminPassword: 'test-password-123',
    sessionSecret: 'test-session-secret-0123456789abcdef0123456789',
    signingKeyFile: process.env[ENV_SIGNING_KEY] as string,
    keyringSecret: 'test-keyring-secret-0123456789abcdef0123456789',
    redisUrl: undefined,
    trustProxy: undefined,
    // Generous by default so unrelated tests never trip them; the rate-limit tests set their own.
    lastSeenIntervalSeconds: 60,
    seatSweepIntervalSeconds: 15,
    // Tests deliver to a receiver on 127.0.0.1 with short retries; the SSRF tests turn private networks off again.
    webhooks: { retryScheduleSeconds: [1, 1], expiringDays: 7, allowPrivateNetworks: true },
    publicUrl: 'https://licences.example.test',
    mail: { from: 'licences@example.test', brandName: 'Example Vendor', disabledKinds: [], retryScheduleSeconds: [1, 1] },
    logLevel: 'silent',
    dbPoolSize: 10,
    metricsToken: undefined,
    ...overrides,
    // A test that sets some limits keeps the generous default for the others.
    rateLimits: {
      activate: 10_000,
      deactivate: 10_000,
      validate: 10_000,
      heartbeat: 10_000,
      admin: 10_000,
      login: 10_000,
      loginPage: 10_000,
      ...overrides.rateLimits,
    },
  };
}

/**
 * Builds the real app (configureApp, as main.ts does) on a fresh clone of the migrated template database.
 * `logDestination` receives the log lines (JSON) instead of stdout; set `logLevel` in `overrides` to get any.
 */
export async function createTestApp(overrides: Partial<AppConfig> = {}, logDestination?: DestinationStream): Promise<TestApp> {
  const adminUrl = process.env[ENV_ADMIN_URL] as string;
  const template = process.env[ENV_TEMPLATE] as string;
  if (!adminUrl || !template) throw new Error('e2e tests need the Jest global setup (run them through `npm test`)');
  const databaseName = newDatabaseName('e2e');
  const databaseUrl = await createDatabaseFromTemplate(adminUrl, template, databaseName);
  return startApp(testConfig(databaseUrl, overrides), databaseName, logDestination, () => dropDatabase(adminUrl, databaseName));
}

/**
 * Another instance of the app on the database of `first` (as a second server of one deployment would be): its own
 * job engine, fan-out and sender. Closing it leaves the database to `first`.
 */
export async function createSecondInstance(first: TestApp, overrides: Partial<AppConfig> = {}): Promise<TestApp> {
  return startApp({ ...first.config, ...overrides }, first.databaseName, undefined, async () => undefined);
}

async function startApp(
  config: AppConfig,
  databaseName: string,
  logDestination: DestinationStream | undefined,
  dropAfterClose: () => Promise<void>,
): Promise<TestApp> {
  const adminUrl = process.env[ENV_ADMIN_URL] as string;
  const moduleRef = await Test.createTestingModule({ imports: [AppModule.forRoot(config, logDestination)] }).compile();
  const app = moduleRef.createNestApplication(new ExpressServerAdapter(), { bodyParser: false, logger: false });
  await configureApp(app, config);
  await app.init();
  const dataSource = app.get<DataSource>(getDataSourceToken());
  const server = app.getHttpServer() as Server;
  const openApi = (await request(server).get('/api/docs-json').expect(200)).body as OpenAPIObject;
  const conformance = openApiConformance(openApi);
  const http = () => conformant(request(server), conformance);
  const withKey = (t: request.Test) => t.set('X-API-Key', TEST_API_KEY);
  return {
    app,
    config,
    dataSource,
    databaseName,
    http,
    openApi,
    admin: {
      get: (url) => withKey(http().get(url)),
      post: (url) => withKey(http().post(url)),
      put: (url) => withKey(http().put(url)),
    },
    sql: (query, params) => dataSource.query(query, params as unknown[]),
    cutDatabase: () => cutDatabase(adminUrl, databaseName),
    restoreDatabase: () => restoreDatabase(adminUrl, databaseName),
    close: async () => {
      await app.close();
      await dropAfterClose();
    },
  };
}
