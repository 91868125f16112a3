import { Injectable, Module, OnModuleInit } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppModule } from '../src/app.module';
import { JobsModule } from '../src/jobs/jobs.module';
import { JobsService } from '../src/jobs/jobs.service';
import { createDatabaseFromTemplate, dropDatabase, ENV_ADMIN_URL, ENV_TEMPLATE, newDatabaseName } from './support/test-database';
import { testConfig } from './support/test-app';

const QUEUE = 'test.echo';

/** A feature module using the job engine the way webhooks will: a worker, and jobs sent inside the change's transaction. */
@Injectable()
class EchoJobs implements OnModuleInit {
  readonly seen: string[] = [];
  constructor(readonly jobs: JobsService) {}
  onModuleInit(): void {
    this.jobs.work<{ marker: string }>(QUEUE, async ({ marker }) => void this.seen.push(marker), { pollingIntervalSeconds: 0.5 });
  }
}

@Module({ imports: [JobsModule], providers: [EchoJobs] })
class EchoModule {}

describe('job engine (pg-boss)', () => {
  const adminUrl = process.env[ENV_ADMIN_URL] as string;
  const databaseName = newDatabaseName('jobs');
  let app: Awaited<ReturnType<typeof build>>;

  async function build() {
    const url = await createDatabaseFromTemplate(adminUrl, process.env[ENV_TEMPLATE] as string, databaseName);
    const moduleRef = await Test.createTestingModule({ imports: [AppModule.forRoot(testConfig(url)), EchoModule] }).compile();
    const nest = moduleRef.createNestApplication({ bodyParser: false, logger: false });
    await nest.init();
    return nest;
  }

  beforeAll(async () => (app = await build()), 60_000);
  afterAll(async () => {
    await app?.close();
    await dropDatabase(adminUrl, databaseName);
  });

  const waitFor = async (check: () => boolean, ms = 10_000) => {
    const until = Date.now() + ms;
    while (!check() && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    return check();
  };

  it('runs a sent job on a worker', async () => {
    const echo = app.get(EchoJobs);
    expect(await echo.jobs.send(QUEUE, { marker: 'plain' })).toEqual(expect.any(String));
    expect(await waitFor(() => echo.seen.includes('plain'))).toBe(true);
  });

  it('a job sent inside a TypeORM transaction exists only if that transaction commits', async () => {
    const echo = app.get(EchoJobs);
    const dataSource = app.get<DataSource>(getDataSourceToken());
    await expect(
      dataSource.transaction(async (manager) => {
        await echo.jobs.send(QUEUE, { marker: 'rolled-back' }, { manager });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    await dataSource.transaction(async (manager) => {
      await echo.jobs.send(QUEUE, { marker: 'committed' }, { manager });
    });
    expect(await waitFor(() => echo.seen.includes('committed'))).toBe(true);
    const rows = await dataSource.query(`SELECT data->>'marker' AS marker FROM pgboss.job WHERE name = $1`, [QUEUE]);
    expect(rows.map((r: { marker: string }) => r.marker).sort()).toEqual(['committed', 'plain']);
    expect(echo.seen).not.toContain('rolled-back');
  });

  it('refuses a transactional send without an open transaction', async () => {
    const echo = app.get(EchoJobs);
    const dataSource = app.get<DataSource>(getDataSourceToken());
    await expect(echo.jobs.send(QUEUE, { marker: 'x' }, { manager: dataSource.manager })).rejects.toThrow(/open transaction/);
  });
});
