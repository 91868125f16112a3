import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Counter } from 'prom-client';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { JobsService } from '../jobs/jobs.service';
import { MetricsService } from '../metrics/metrics.service';
import { resolveWebhookTarget, ResolvedTarget } from './url-guard';
import { WebhookSecrets } from './webhook-secrets';
import { AttemptResult, postOnce, ReceiverConnections } from './webhook-sender';
import { ATTEMPT_LEASE_SECONDS, ClaimedDelivery, FinishedAttempt, WebhooksRepository } from './webhooks.repository';

/**
 * The outbox is the queue; jobs only wake a worker to drain it. `short`: at most one waiting job, any number running,
 * so a burst of events adds one job, not one per event (the engine hands a worker one job per poll).
 */
export const DRAIN_QUEUE = 'webhook-drain';
/** A failed attempt's wake-up at its retry time (one job per retry). */
export const RETRY_QUEUE = 'webhook-retry';
export const SWEEP_QUEUE = 'webhook-sweep';
/** Its own queue (not stately like the minute's one): every start's look after the lease is kept, even with one waiting. */
export const SWEEP_AFTER_START_QUEUE = 'webhook-sweep-after-start';
/**
 * A drain has at most this many attempts claimed and unfinished; at most PER_ENDPOINT of them in flight to one endpoint,
 * and as many more claimed for it, waiting for a slot.
 */
export const DRAIN_CONCURRENCY = 32;
export const PER_ENDPOINT = 8;
/**
 * After a claim that took fewer than it asked for (nothing more due, or the endpoints with due attempts are at
 * PER_ENDPOINT), the next claim waits until this many attempts have finished, or none is in flight: one claim per
 * few deliveries, not one per delivery. No timer: attempts finish as fast as receivers answer.
 */
const REFILL = 4;
/**
 * A drain claims nothing more while this many of its outcomes wait for their write: what a crash can leave sent but
 * unrecorded (each comes back after its lease with the same webhook-id) stays bounded, and so does their memory.
 */
export const MAX_UNWRITTEN = 4 * DRAIN_CONCURRENCY;
/** A drain claims for up to DRAIN_MS; its last attempts end well before the job's 60 s expiry. */
const DRAIN_MS = 20_000;

/** A failed attempt's last_error when KEYRING_SECRET does not open the endpoint's secret (docs/webhooks.md, "Secrets at rest"). */
const UNREADABLE_SECRET = "the endpoint's secret cannot be decrypted with this KEYRING_SECRET: rotate it";

/**
 * Sends the due deliveries (docs/webhooks.md, Delivery, retries and "at least once"): claims them in batches (SKIP
 * LOCKED, so two workers or instances never hold the same one), sends them over kept-alive connections to the vetted
 * address, at most DRAIN_CONCURRENCY at once and PER_ENDPOINT per endpoint, and records the outcomes in batches: the
 * outcomes that came in while one batch was being written are the next batch.
 */
@Injectable()
export class WebhookDrain implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Webhooks');
  private readonly outcomes: Counter<'outcome'>;
  private readonly connections = new ReceiverConnections(PER_ENDPOINT);
  /** Opened secrets by endpoint, while the stored value is the same (opening one derives a key). */
  private readonly signers = new Map<number, { stored: string; signer: Webhook | null }>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly repository: WebhooksRepository,
    private readonly jobs: JobsService,
    private readonly secrets: WebhookSecrets,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    metrics: MetricsService,
  ) {
    this.outcomes = new Counter({
      name: 'webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts by outcome (delivered, retry, failed)',
      labelNames: ['outcome'] as const,
      registers: [metrics.registry],
    });
  }

  onModuleInit(): void {
    const drain = async () => {
      await this.deliverDue();
    };
    // Longer than a drain (DRAIN_MS plus its last attempts), so a running drain is never handed to a second worker.
    this.jobs.work(DRAIN_QUEUE, drain, { policy: 'short', pollingIntervalSeconds: 0.5, expireInSeconds: 60, retryLimit: 5 });
    this.jobs.work(RETRY_QUEUE, drain, { pollingIntervalSeconds: 1, expireInSeconds: 60, retryLimit: 5 });
    // The safety net: attempts claimed by a process that was killed (free again when their lease ends), and the rare
    // event whose wake-up was refused while a waiting job was already being taken.
    this.jobs.schedule(SWEEP_QUEUE, '* * * * *', drain, { policy: 'stately' });
    this.jobs.work(SWEEP_AFTER_START_QUEUE, drain);
  }

  /** After a crash the dead process's claimed attempts are free again once their lease ends: look then, not up to a minute later. */
  async onApplicationBootstrap(): Promise<void> {
    await this.jobs.send(SWEEP_AFTER_START_QUEUE, {}, { startAfterSeconds: ATTEMPT_LEASE_SECONDS + 1 });
  }

  onModuleDestroy(): void {
    this.connections.closeAll();
  }

  /** Has this instance's drain look now (a fan-out pass of this instance committed deliveries). */
  wake(): void {
    this.jobs.wake(DRAIN_QUEUE);
  }

  /**
   * Sends every due attempt, for at most DRAIN_MS; stops when a claim finds none and nothing is outstanding. Returns
   * how many it sent. Claims run while attempts are in flight: an endpoint has up to PER_ENDPOINT attempts in flight
   * and as many claimed, waiting for a slot, so its connections never idle while the next claim is made. A waiting
   * attempt starts when one of the attempts in flight at its claim ends (within ATTEMPT_TIMEOUT_MS), so it still ends
   * well inside its lease.
   */
  async deliverDue(): Promise<number> {
    const until = Date.now() + DRAIN_MS;
    const writer = new OutcomeWriter((batch) => this.record(batch));
    const run = new DrainRun((claimed, target) => this.send(claimed, target), writer);
    let sent = 0;
    let finishedAtClaim = 0;
    let shortClaim = false;
    while (run.failure === undefined && writer.failure === undefined && Date.now() < until) {
      const room = DRAIN_CONCURRENCY - run.outstanding;
      if (writer.unwritten >= MAX_UNWRITTEN) await writer.written();
      else if (room > 0 && (!shortClaim || run.outstanding === 0 || run.finished - finishedAtClaim >= REFILL)) {
        finishedAtClaim = run.finished;
        const claimed = await this.repository.claimDue(room, 2 * PER_ENDPOINT, run.outstandingByEndpoint);
        shortClaim = claimed.length < room;
        if (claimed.length === 0 && run.outstanding === 0) break;
        sent += claimed.length;
        run.add(claimed, await this.resolveTargets(claimed));
      } else await run.change();
    }
    await run.settled();
    await writer.idle();
    const failure = run.failure ?? writer.failure;
    if (failure !== undefined) throw failure as Error;
    // Cut short with attempts still due: wake another worker rather than wait for the sweep.
    if (Date.now() >= until) await this.jobs.send(DRAIN_QUEUE, {});
    return sent;
  }

  /**
   * Each claimed URL resolved and vetted once per claim: the SSRF rules run again before every batch of sends, and
   * each request goes to exactly the address that was checked (docs/webhooks.md, SSRF rules).
   */
  private async resolveTargets(claimed: readonly ClaimedDelivery[]): Promise<Map<string, Target>> {
    const urls = [...new Set(claimed.filter((c) => c.endpointActive).map((c) => c.url))];
    const resolved = await Promise.all(urls.map((url) => resolveWebhookTarget(url, this.config.webhooks.allowPrivateNetworks)));
    return new Map(urls.map((url, i) => [url, resolved[i]]));
  }

  private async send(claimed: ClaimedDelivery, target: Target): Promise<AttemptResult> {
    if (!claimed.endpointActive || !target) return { ok: false, statusCode: null, error: 'the endpoint is inactive' };
    const signer = await this.signer(claimed.endpointId, claimed.storedSecret);
    if (signer === null) return { ok: false, statusCode: null, error: UNREADABLE_SECRET };
    if ('problem' in target) return { ok: false, statusCode: null, error: target.problem };
    const body = JSON.stringify(claimed.payload);
    const sentAt = new Date();
    const headers = {
      'webhook-id': claimed.eventId,
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'webhook-signature': signer.sign(claimed.eventId, sentAt, body),
    };
    return postOnce(target, headers, body, this.connections.agentFor(target));
  }

  private async signer(endpointId: number, stored: string): Promise<Webhook | null> {
    const known = this.signers.get(endpointId);
    if (known?.stored === stored) return known.signer;
    const secret = await this.secrets.reveal(endpointId, stored);
    const signer = secret === null ? null : new Webhook(secret);
    this.signers.set(endpointId, { stored, signer });
    return signer;
  }

  /**
   * Records a batch of outcomes: the delivered and failed ones in one statement; each retry with its wake-up job in
   * one transaction (a retry is rare: a receiver that failed).
   */
  private async record(batch: readonly { claimed: ClaimedDelivery; result: AttemptResult }[]): Promise<void> {
    const schedule = this.config.webhooks.retryScheduleSeconds;
    const settled: FinishedAttempt[] = [];
    const retries: FinishedAttempt[] = [];
    for (const { claimed, result } of batch) {
      const base = { deliveryId: claimed.id, attempt: claimed.attempts, statusCode: result.statusCode, error: result.error };
      if (result.ok) settled.push({ ...base, status: 'delivered', error: null, nextAttemptInSeconds: null });
      else if (claimed.attempts <= schedule.length && claimed.endpointActive)
        retries.push({ ...base, status: 'pending', nextAttemptInSeconds: schedule[claimed.attempts - 1] });
      else settled.push({ ...base, status: 'failed', nextAttemptInSeconds: null });
    }
    await this.repository.finishAttempts(settled);
    for (const outcome of settled) this.outcomes.inc({ outcome: outcome.status });
    for (const retry of retries) {
      this.outcomes.inc({ outcome: 'retry' });
      await this.dataSource.transaction(async (manager) => {
        if ((await this.repository.finishAttempts([retry], manager)).length > 0)
          await this.jobs.send(
            RETRY_QUEUE,
            { deliveryId: retry.deliveryId },
            { manager, startAfterSeconds: retry.nextAttemptInSeconds ?? 0 },
          );
      });
    }
  }
}

type Target = ResolvedTarget | { problem: string } | undefined;

/**
 * One drain's attempts: claimed ones wait for a slot (PER_ENDPOINT in flight per endpoint) and start as slots free;
 * each outcome goes to the writer. `change()` resolves at the next finished attempt.
 */
class DrainRun {
  failure: unknown;
  /** Attempts finished so far. */
  finished = 0;
  /** Claimed and not finished (waiting or in flight), in all and per endpoint. */
  outstanding = 0;
  readonly outstandingByEndpoint = new Map<number, number>();
  private readonly inFlight = new Map<number, number>();
  private readonly waiting: { claimed: ClaimedDelivery; target: Target }[] = [];
  private changed?: { promise: Promise<void>; resolve: () => void };

  constructor(
    private readonly send: (claimed: ClaimedDelivery, target: Target) => Promise<AttemptResult>,
    private readonly writer: OutcomeWriter,
  ) {}

  add(claimed: readonly ClaimedDelivery[], targets: ReadonlyMap<string, Target>): void {
    for (const next of claimed) {
      this.outstanding++;
      bump(this.outstandingByEndpoint, next.endpointId, 1);
      this.waiting.push({ claimed: next, target: targets.get(next.url) });
    }
    this.start();
  }

  change(): Promise<void> {
    if (!this.changed) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.changed = { promise, resolve };
    }
    return this.changed.promise;
  }

  /** Resolves once nothing is outstanding. */
  async settled(): Promise<void> {
    while (this.outstanding > 0) await this.change();
  }

  private start(): void {
    for (let i = 0; i < this.waiting.length;) {
      const { claimed, target } = this.waiting[i];
      if ((this.inFlight.get(claimed.endpointId) ?? 0) >= PER_ENDPOINT) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      bump(this.inFlight, claimed.endpointId, 1);
      void this.send(claimed, target)
        .then((result) => this.writer.add(claimed, result))
        .catch((err: unknown) => {
          this.failure ??= err;
        })
        .finally(() => {
          bump(this.inFlight, claimed.endpointId, -1);
          bump(this.outstandingByEndpoint, claimed.endpointId, -1);
          this.outstanding--;
          this.finished++;
          this.start();
          const changed = this.changed;
          this.changed = undefined;
          changed?.resolve();
        });
    }
  }
}

function bump(counts: Map<number, number>, key: number, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
}

/**
 * Outcomes written in batches without waiting for a timer: the first is written at once, and those that arrive while a
 * write is under way are the next write. A failed write is kept (the drain fails, its attempts come back after their
 * lease).
 */
class OutcomeWriter {
  failure: unknown;
  private queued: { claimed: ClaimedDelivery; result: AttemptResult }[] = [];
  private writing?: Promise<void>;
  /** The batch being written, and how many outcomes it holds. */
  private current?: Promise<void>;
  private inWrite = 0;

  constructor(private readonly write: (batch: readonly { claimed: ClaimedDelivery; result: AttemptResult }[]) => Promise<void>) {}

  add(claimed: ClaimedDelivery, result: AttemptResult): void {
    this.queued.push({ claimed, result });
    this.writing ??= this.flush();
  }

  /** Outcomes added and not yet written. */
  get unwritten(): number {
    return this.queued.length + this.inWrite;
  }

  /** Resolves when the batch being written now is written (or its write failed; `failure` says so). */
  written(): Promise<void> {
    return this.current?.catch(() => undefined) ?? Promise.resolve();
  }

  /** Resolves once everything added so far is written (or a write failed). */
  async idle(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async flush(): Promise<void> {
    try {
      while (this.queued.length > 0 && this.failure === undefined) {
        const batch = this.queued;
        this.queued = [];
        this.inWrite = batch.length;
        this.current = this.write(batch);
        await this.current;
      }
    } catch (err) {
      this.failure = err;
    } finally {
      this.writing = this.current = undefined;
      this.inWrite = 0;
    }
  }
}
