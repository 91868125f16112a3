import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { PgBoss, QueuePolicy } from 'pg-boss';
import type { EntityManager } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { createJobEngine, transactionExecutor } from './job-engine';

/** What a job does with its data; a rejection fails the attempt (pg-boss retries it). */
export type JobHandler<T extends object> = (data: T) => Promise<void>;

export interface QueueSettings {
  /** pg-boss queue policy; `stately` keeps at most one job waiting and one running, whatever the instances. */
  policy?: QueuePolicy;
  /** How often an idle worker looks for jobs (pg-boss polls; default 2 s). */
  pollingIntervalSeconds?: number;
  /** A running job not finished within this is retried elsewhere (a crashed instance's job is not lost). */
  expireInSeconds?: number;
  retryLimit?: number;
}

export interface SendOptions {
  /** The manager of an open TypeORM transaction: the job is inserted in it and exists only if it commits. */
  manager?: EntityManager;
  startAfterSeconds?: number;
  singletonKey?: string;
}

interface Registration {
  name: string;
  cron?: string;
  handler: JobHandler<object>;
  settings: QueueSettings;
}

/** Stop waits this long for running jobs before the pool closes (the database stops after it). */
const STOP_TIMEOUT_MS = 10_000;

/**
 * The job engine: pg-boss on the app's PostgreSQL (its own small pool, schema `pgboss`). Modules register
 * queues while the app initialises (schedule, work); the engine starts when the app has bootstrapped (in the
 * background) and drains on shutdown, before the database pool closes. Every instance works every queue: pg-boss hands
 * each job to one of them (SKIP LOCKED), and a schedule fires once per occurrence across all instances. Every instance
 * stores its schedules (an idempotent upsert); in a cluster worker (WEB_CONCURRENCY > 1) the clock that fires them and
 * pg-boss's maintenance run in the primary instead.
 */
@Injectable()
export class JobsService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Jobs');
  private readonly registrations = new Map<string, Registration>();
  private started?: Promise<PgBoss>;
  /** This instance's worker of each queue (pg-boss worker ids), for wake(). */
  private readonly workers = new Map<string, string>();
  /** Set while handlers are held (holdHandlers); jobs fetched meanwhile wait for it before their handler runs. */
  private hold?: { released: Promise<void>; release: () => void };
  private runningHandlers = 0;
  private readonly whenIdle: (() => void)[] = [];

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** A queue worked by `handler` that also gets a job on every occurrence of `cron` (5 fields, UTC; at most once a minute). */
  schedule<T extends object>(name: string, cron: string, handler: JobHandler<T>, settings: QueueSettings = {}): void {
    this.register({ name, cron, handler: handler as JobHandler<object>, settings });
  }

  /** A queue worked by `handler` on every instance. */
  work<T extends object>(name: string, handler: JobHandler<T>, settings: QueueSettings = {}): void {
    this.register({ name, handler: handler as JobHandler<object>, settings });
  }

  /**
   * Enqueues a job; returns its id, or null when the queue's policy refused it (e.g. `stately` with one
   * already waiting). With `manager` the job is inserted inside that transaction:
   * `dataSource.transaction(async (manager) => { ...change...; await jobs.send('x', data, { manager }); })`.
   */
  async send(name: string, data: object, options: SendOptions = {}): Promise<string | null> {
    const boss = await this.engine();
    return boss.send(name, data, {
      ...(options.manager ? { db: transactionExecutor(options.manager) } : {}),
      ...(options.startAfterSeconds !== undefined ? { startAfter: options.startAfterSeconds } : {}),
      ...(options.singletonKey !== undefined ? { singletonKey: options.singletonKey } : {}),
    });
  }

  /**
   * Has this instance's worker of `name` look for jobs now instead of at its next poll: for a job this instance just
   * committed (docs/webhooks.md, The event spine). Other instances still find it at their own poll; before the engine
   * has started it does nothing (the worker's first poll comes soon after).
   */
  wake(name: string): void {
    const worker = this.workers.get(name);
    if (!worker || !this.started) return;
    void this.started.then((boss) => boss.notifyWorker(worker)).catch(() => undefined);
  }

  /**
   * Holds this instance's job handlers: a job fetched from now on waits before its handler until releaseHandlers(), and
   * this resolves once the handlers already running have finished. While held, this instance's schedules and drains
   * send no statement of their own, so what a request sends can be counted alone (docs/testing.md, On a busy machine);
   * a held job stays active in pg-boss and runs on release (well within its expireInSeconds).
   */
  async holdHandlers(): Promise<void> {
    if (!this.hold) {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      this.hold = { released, release };
    }
    while (this.runningHandlers > 0) await new Promise<void>((resolve) => this.whenIdle.push(resolve));
  }

  releaseHandlers(): void {
    const hold = this.hold;
    this.hold = undefined;
    hold?.release();
  }

  /** Starts in the background: serving requests does not wait for the engine (jobs sent meanwhile wait for it). */
  onApplicationBootstrap(): void {
    this.engine().catch((err: Error) => this.logger.error(`the job engine did not start: ${err.message}`));
  }

  async onModuleDestroy(): Promise<void> {
    const started = this.started;
    if (!started) return;
    const boss = await started.catch(() => undefined);
    // Graceful: workers stop fetching and running jobs may finish (bounded) before the pool closes.
    await boss?.stop({ graceful: true, close: true, timeout: STOP_TIMEOUT_MS });
  }

  private register(registration: Registration): void {
    if (this.started) throw new Error(`jobs: queue "${registration.name}" registered after the engine started`);
    if (this.registrations.has(registration.name)) throw new Error(`jobs: queue "${registration.name}" registered twice`);
    this.registrations.set(registration.name, registration);
  }

  private engine(): Promise<PgBoss> {
    this.started ??= this.start();
    return this.started;
  }

  private async start(): Promise<PgBoss> {
    // A cluster worker only works queues: the primary's engine (src/cluster/primary.ts) runs the clock that turns schedules
    // into jobs and the maintenance, once for the machine; the primary also installed the schema before forking.
    const role = this.config.clusterWorker ? { schedule: false, supervise: false, migrate: false } : {};
    const boss = createJobEngine(this.config.databaseUrl, { max: 4, ...role });
    // pg-boss reports database trouble as events; without a listener Node would throw them.
    boss.on('error', (err: Error) => this.logger.warn(`job engine: ${err.message}`));
    await boss.start();
    for (const { name, cron, handler, settings } of this.registrations.values()) {
      const { policy = 'standard', pollingIntervalSeconds, ...queueOptions } = settings;
      await boss.createQueue(name, { policy, ...queueOptions }); // idempotent
      if (cron) await boss.schedule(name, cron, {});
      const worker = await boss.work<object>(name, { ...(pollingIntervalSeconds ? { pollingIntervalSeconds } : {}) }, async (jobs) => {
        while (this.hold) await this.hold.released;
        this.runningHandlers++;
        try {
          for (const job of jobs) await handler(job.data);
        } finally {
          if (--this.runningHandlers === 0) for (const resolve of this.whenIdle.splice(0)) resolve();
        }
      });
      this.workers.set(name, worker);
    }
    return boss;
  }
}
