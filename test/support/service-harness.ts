import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { Test, TestingModule } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Registry } from 'prom-client';
import type { DataSource, EntityManager } from 'typeorm';
import { AuditRepository } from '../../src/audit/audit.repository';
import { AuditService } from '../../src/audit/audit.service';
import { EventRecorder } from '../../src/events/event-recorder';
import type { Actor } from '../../src/common/auth/actor';
import { AppConfig } from '../../src/config/app-config';
import { ConfigModule } from '../../src/config/config.module';
import { DatabaseModule } from '../../src/database/database.module';
import { JobsService, SendOptions } from '../../src/jobs/jobs.service';
import { CreateLicenseDto } from '../../src/licenses/dto/create-license.dto';
import type { License } from '../../src/licenses/license.entity';
import { LicenseCreation } from '../../src/licenses/license-creation';
import { LicensesRepository } from '../../src/licenses/licenses.repository';
import { LicensesService } from '../../src/licenses/licenses.service';
import { ChangeLicense } from '../../src/licenses/use-cases/change-license';
import { CreateLicense } from '../../src/licenses/use-cases/create-license';
import { LicenseWriter } from '../../src/licenses/use-cases/license-writer';
import { RevokeLicense } from '../../src/licenses/use-cases/revoke-license';
import { SeatsRepository } from '../../src/licenses/seats/seats.repository';
import { SeatsService } from '../../src/licenses/seats/seats.service';
import { TrialsRepository } from '../../src/licenses/trials/trials.repository';
import { MetricsService } from '../../src/metrics/metrics.service';
import { ProductsRepository } from '../../src/products/products.repository';
import { ProductsService } from '../../src/products/products.service';
import { StatsRepository } from '../../src/stats/stats.repository';
import { StatsService } from '../../src/stats/stats.service';
import { EventFanoutService } from '../../src/events/event-fanout.service';
import { EventOutboxRepository } from '../../src/events/event-outbox.repository';
import { WebhookDrain } from '../../src/webhooks/webhook-drain';
import { WebhookSecrets } from '../../src/webhooks/webhook-secrets';
import { WebhooksRepository } from '../../src/webhooks/webhooks.repository';
import { WebhooksService } from '../../src/webhooks/webhooks.service';
import { createDatabaseFromTemplate, dropDatabase, ENV_ADMIN_URL, ENV_TEMPLATE, newDatabaseName } from './test-database';
import { testConfigFor } from './unit-config';

/** A job the services asked for; the harness records it instead of running a job engine. */
export interface SentJob {
  name: string;
  data: object;
  /** Sent inside a transaction (send({ manager })). */
  inTransaction: boolean;
}

/**
 * Stands in for the pg-boss engine: schedules and workers are accepted and never run, sends are recorded, so a test
 * sees what would have been woken without a worker racing it.
 */
export class RecordingJobs implements Pick<JobsService, 'schedule' | 'work' | 'send' | 'wake'> {
  readonly sent: SentJob[] = [];
  /** The queues whose local worker was told to look now (wake), in order. */
  readonly woken: string[] = [];

  schedule(): void {}

  work(): void {}

  send(name: string, data: object, options: SendOptions = {}): Promise<string | null> {
    this.sent.push({ name, data, inTransaction: options.manager !== undefined });
    return Promise.resolve(`job-${this.sent.length}`);
  }

  wake(name: string): void {
    this.woken.push(name);
  }
}

/** The services and repositories of the integration tier, by class (Nest's DI wires them as the app does). */
const PROVIDERS = [
  EventRecorder,
  AuditRepository,
  AuditService,
  ProductsRepository,
  ProductsService,
  LicensesRepository,
  LicenseCreation,
  LicensesService,
  LicenseWriter,
  CreateLicense,
  ChangeLicense,
  RevokeLicense,
  SeatsRepository,
  TrialsRepository,
  SeatsService,
  StatsRepository,
  StatsService,
  WebhooksRepository,
  WebhooksService,
  WebhookDrain,
  WebhookSecrets,
  EventOutboxRepository,
  EventFanoutService,
];

export interface ServiceHarness {
  module: TestingModule;
  config: AppConfig;
  dataSource: DataSource;
  databaseName: string;
  jobs: RecordingJobs;
  /** A provider of the tier (a service or repository class). */
  get<T>(type: new (...args: never[]) => T): T;
  /** Raw SQL against this file's database, for setting up the clock (timestamps) and reading results. */
  // Ad-hoc rows of each test's own SQL, checked by that test's expectations; pass a row type where it helps.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  sql<T = Record<string, any>>(query: string, params?: unknown[]): Promise<T[]>;
  /** Runs `work` in one transaction (for repository methods that take the caller's manager). */
  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export const ADMIN_ACTOR: Actor = { type: 'admin_api', name: 'integration', ip: '127.0.0.1' };
export const CLIENT_ACTOR: Actor = { type: 'client', name: '198.51.100.7', ip: '198.51.100.7' };

/**
 * The integration tier's app (docs/testing.md, The three tiers): the services and repositories on a fresh clone of the
 * migrated template database, wired by Nest, without HTTP, controllers, guards or Redis. Lifecycle hooks do not run
 * (no init()): no job engine, no fan-out poller, no sweep; a test calls the pass it wants (fanOutPending, sweepDeadSeats).
 */
export async function createServiceHarness(overrides: Partial<AppConfig> = {}): Promise<ServiceHarness> {
  const adminUrl = process.env[ENV_ADMIN_URL];
  const template = process.env[ENV_TEMPLATE];
  if (!adminUrl || !template) throw new Error('integration tests need the Jest global setup (run them through `npm run test:integration`)');
  const databaseName = newDatabaseName('int');
  const databaseUrl = await createDatabaseFromTemplate(adminUrl, template, databaseName);
  const config = testConfigFor({
    databaseUrl,
    dbPoolSize: 8,
    webhooks: { retryScheduleSeconds: [1, 1], expiringDays: 7, allowPrivateNetworks: true },
    publicUrl: 'https://licences.example.test',
    mail: { from: 'licences@example.test', brandName: 'Example Vendor', disabledKinds: [], retryScheduleSeconds: [1, 1] },
    ...overrides,
  });
  const jobs = new RecordingJobs();
  let module: TestingModule | undefined;
  try {
    module = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(config), DatabaseModule],
      providers: [
        ...PROVIDERS,
        { provide: JobsService, useValue: jobs },
        // The webhook service registers its gauges here; the real MetricsService also samples the pool and the process.
        { provide: MetricsService, useValue: { registry: new Registry() } },
      ],
    }).compile();
  } catch (err) {
    await dropDatabase(adminUrl, databaseName);
    throw err;
  }
  const ref = module;
  // What WebhooksService.onModuleInit does in the app: webhooks consume the spine's events.
  ref.get(EventFanoutService).addConsumer(ref.get(WebhooksService));
  const dataSource = ref.get<DataSource>(getDataSourceToken());
  return {
    module: ref,
    config,
    dataSource,
    databaseName,
    jobs,
    get: (type) => ref.get(type),
    sql: (query, params) => dataSource.query(query, params),
    transaction: (work) => dataSource.transaction(work),
    close: async () => {
      await ref.close();
      await dropDatabase(adminUrl, databaseName);
    },
  };
}

let customers = 0;

/** Issues a licence through CreateLicense (a YEARLY POS_RETAIL licence for a uniquely named customer by default). */
export async function issueLicense(h: ServiceHarness, input: Partial<CreateLicenseDto> = {}): Promise<License> {
  customers += 1;
  const dto = { product_code: 'POS_RETAIL', license_type: 'YEARLY', customer_name: `Integration Customer ${customers}`, ...input };
  return h.get(CreateLicense).create(dto as CreateLicenseDto, ADMIN_ACTOR);
}

/** The id of a seeded product (POS_RETAIL, ERP_SUITE, FISCAL_BRIDGE). */
export async function productId(h: ServiceHarness, code: string): Promise<number> {
  const [row] = await h.sql<{ id: number }>(`SELECT id FROM products WHERE code = $1`, [code]);
  if (!row) throw new Error(`no product ${code}`);
  return row.id;
}

/** A valid machine fingerprint (`sha256:` + 64 lower-case hex), the same for the same seed. */
export const machine = (seed: string) => `sha256:${createHash('sha256').update(seed).digest('hex')}`;
