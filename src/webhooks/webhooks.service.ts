import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { Counter, Gauge } from 'prom-client';
import { Webhook } from 'standardwebhooks';
import { DataSource, EntityManager } from 'typeorm';
import type { EventConsumer, PendingEvent } from '../events/event-consumer';
import { EventFanoutService } from '../events/event-fanout.service';
import { EventRecorder } from '../events/event-recorder';
import { type Actor, ALL_PRODUCTS, type ProductScope, productScopeWithin } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { JobsService } from '../jobs/jobs.service';
import { MetricsService } from '../metrics/metrics.service';
import { ProductsService } from '../products/products.service';
import type { CreateWebhookDto, UpdateWebhookDto, WebhookDeliveryDto, WebhookEndpointDto } from './dto/webhook.dto';
import { resolveWebhookTarget } from './url-guard';
import { WebhookSecrets } from './webhook-secrets';
import { WebhookDelivery, WebhookEndpoint } from './webhook.entities';
import { ALL_EVENTS } from './webhook-events';
import { fanOut } from './webhook-fanout';
import { postOnce } from './webhook-sender';
import { ATTEMPT_LEASE_SECONDS, ClaimedDelivery, DeliveryWithType, WebhooksRepository } from './webhooks.repository';

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
/** A drain sends this many attempts at once, for up to DRAIN_MS; its last attempt ends well before the job's 60 s expiry. */
const DRAIN_CONCURRENCY = 8;
const DRAIN_MS = 20_000;

/** `whsec_` + base64 of 32 random bytes (docs/webhooks.md, Endpoints), the format `standardwebhooks` reads. */
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString('base64')}`;
/** A failed attempt's last_error when KEYRING_SECRET does not open the endpoint's secret (docs/webhooks.md, "Secrets at rest"). */
const UNREADABLE_SECRET = "the endpoint's secret cannot be decrypted with this KEYRING_SECRET: rotate it";

/** `codes`: the current code of each product id (an endpoint's limit is stored as ids, shown as codes). */
const toEndpointDto = (e: WebhookEndpoint, codes: ReadonlyMap<number, string>): WebhookEndpointDto => ({
  id: e.id,
  url: e.url,
  events: e.events,
  description: e.description,
  active: e.active,
  products: e.productIds && e.productIds.flatMap((id) => codes.get(id) ?? []),
  created_at: e.createdAt.toISOString(),
  updated_at: e.updatedAt.toISOString(),
});

const toDeliveryDto = (d: WebhookDelivery, eventType: string): WebhookDeliveryDto => ({
  id: Number(d.id),
  event_id: d.eventId,
  event_type: eventType,
  status: d.status,
  attempts: d.attempts,
  last_status_code: d.lastStatusCode,
  last_error: d.lastError,
  next_attempt_at: d.status === 'pending' && d.nextAttemptAt ? d.nextAttemptAt.toISOString() : null,
  created_at: d.createdAt.toISOString(),
  delivered_at: d.deliveredAt ? d.deliveredAt.toISOString() : null,
});

/**
 * Webhooks (docs/webhooks.md). Events are written to the outbox with the change by the event recorder and fanned out to
 * deliveries after commit (EventFanoutService); every attempt is claimed in one statement before it is sent, so nothing
 * is lost on a crash and no attempt is sent twice at once. Retries follow WEBHOOK_RETRY_SCHEDULE; after the last one
 * the delivery is `failed`.
 */
@Injectable()
export class WebhooksService implements EventConsumer, OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger('Webhooks');
  private readonly outcomes: Counter<'outcome'>;
  /** The current fan-out pass inserted deliveries (passes run one at a time per instance): wake the drain when it commits. */
  private drainAfterCommit = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly repository: WebhooksRepository,
    private readonly events: EventRecorder,
    private readonly jobs: JobsService,
    private readonly fanout: EventFanoutService,
    private readonly secrets: WebhookSecrets,
    private readonly products: ProductsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    metrics: MetricsService,
  ) {
    this.outcomes = new Counter({
      name: 'webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts by outcome (delivered, retry, failed)',
      labelNames: ['outcome'] as const,
      registers: [metrics.registry],
    });
    const summary = () => this.repository.pendingSummary();
    new Gauge({
      name: 'webhook_deliveries_pending',
      help: 'Webhook deliveries waiting to be delivered (the queue depth)',
      registers: [metrics.registry],
      // Read from the database by every worker of a cluster: the same value, not one to add up.
      aggregator: 'max',
      async collect() {
        this.set((await summary()).pending);
      },
    });
    new Gauge({
      name: 'webhook_oldest_pending_age_seconds',
      help: 'Age of the oldest webhook delivery still pending',
      registers: [metrics.registry],
      aggregator: 'max',
      async collect() {
        this.set((await summary()).oldestSeconds);
      },
    });
  }

  onModuleInit(): void {
    this.fanout.addConsumer(this);
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

  // --- endpoints ---------------------------------------------------------------------------------------------

  /**
   * An endpoint made by a credential limited to products is limited to those products: it receives only their
   * events (docs/webhooks.md, Product limits).
   */
  async createEndpoint(
    input: CreateWebhookDto,
    actor: Actor,
    products: ProductScope = ALL_PRODUCTS,
  ): Promise<WebhookEndpointDto & { secret: string }> {
    WebhooksService.checkEvents(input.events);
    await this.checkUrl(input.url);
    const secret = newWebhookSecret();
    const productIds = products === null ? null : [...products];
    const saved = await this.dataSource.transaction(async (manager) => {
      const endpoint = await this.repository.insertEndpoint(
        {
          url: input.url,
          events: input.events,
          description: input.description ?? null,
          active: input.active ?? true,
          secret: '',
          productIds,
        },
        manager,
      );
      // Sealed to the row's id, which exists only after the insert (docs/webhooks.md, "Secrets at rest").
      await this.repository.setSecret(endpoint.id, this.secrets.seal(secret, endpoint.id), manager);
      await this.events.record(manager, {
        type: 'webhook.created',
        actor,
        details: { webhook_id: endpoint.id, url: endpoint.url, events: endpoint.events, product_ids: productIds },
      });
      return endpoint;
    });
    return { ...(await this.endpointDtos([saved]))[0], secret };
  }

  /** A credential limited to products sees only endpoints limited to (some of) its products. */
  async listEndpoints(products: ProductScope = ALL_PRODUCTS): Promise<WebhookEndpointDto[]> {
    return this.endpointDtos((await this.repository.listEndpoints()).filter((e) => productScopeWithin(e.productIds, products)));
  }

  async getEndpoint(id: number, products: ProductScope = ALL_PRODUCTS): Promise<WebhookEndpointDto> {
    return (await this.endpointDtos([await this.endpointOr404(id, undefined, products)]))[0];
  }

  async updateEndpoint(
    id: number,
    input: UpdateWebhookDto,
    actor: Actor,
    products: ProductScope = ALL_PRODUCTS,
  ): Promise<WebhookEndpointDto> {
    WebhooksService.checkEvents(input.events);
    if (input.url !== undefined) await this.checkUrl(input.url);
    const saved = await this.dataSource.transaction(async (manager) => {
      const endpoint = await this.endpointOr404(id, manager, products);
      const changes: Record<string, { from: unknown; to: unknown }> = {};
      for (const field of ['url', 'events', 'description', 'active'] as const) {
        const value = input[field];
        if (value === undefined || JSON.stringify(value) === JSON.stringify(endpoint[field])) continue;
        changes[field] = { from: endpoint[field], to: value };
        Object.assign(endpoint, { [field]: value });
      }
      if (Object.keys(changes).length === 0) return endpoint;
      endpoint.updatedAt = new Date();
      const updated = await this.repository.updateEndpoint(endpoint, manager);
      await this.events.record(manager, { type: 'webhook.updated', actor, details: { webhook_id: id, changes } });
      return updated;
    });
    return (await this.endpointDtos([saved]))[0];
  }

  async deleteEndpoint(id: number, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const endpoint = await this.endpointOr404(id, manager, products);
      await this.repository.deleteEndpoint(id, manager);
      await this.events.record(manager, { type: 'webhook.deleted', actor, details: { webhook_id: id, url: endpoint.url } });
    });
  }

  async rotateSecret(id: number, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<{ secret: string }> {
    const secret = newWebhookSecret();
    await this.dataSource.transaction(async (manager) => {
      const endpoint = await this.endpointOr404(id, manager, products);
      endpoint.secret = this.secrets.seal(secret, id);
      endpoint.updatedAt = new Date();
      await this.repository.updateEndpoint(endpoint, manager);
      await this.events.record(manager, { type: 'webhook.secret_rotated', actor, details: { webhook_id: id } });
    });
    return { secret };
  }

  // --- deliveries --------------------------------------------------------------------------------------------

  async listDeliveries(
    endpointId: number,
    limit: number,
    offset: number,
    products: ProductScope = ALL_PRODUCTS,
  ): Promise<{ items: WebhookDeliveryDto[]; total: number }> {
    await this.endpointOr404(endpointId, undefined, products);
    const { rows, total } = await this.repository.listDeliveries(endpointId, limit, offset);
    return { items: rows.map((d) => toDeliveryDto(d, d.eventType)), total };
  }

  /**
   * Sends a failed delivery again (same event, same `webhook-id`), with a fresh retry schedule. 409 unless failed;
   * 404 for a delivery of an endpoint outside the credential's products.
   */
  async retryDelivery(id: string, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<WebhookDeliveryDto> {
    await this.dataSource.transaction(async (manager) => {
      const delivery = await this.repository.getDelivery(id, manager);
      if (!delivery || !(await this.endpointIn(delivery.endpointId, products, manager))) throw AppError.notFound('Webhook delivery');
      if (!(await this.repository.reopenFailed(id, manager))) {
        throw AppError.conflict(`Only a failed delivery can be retried; this one is ${delivery.status}`, { status: delivery.status });
      }
      await this.jobs.send(DRAIN_QUEUE, {}, { manager });
      await this.events.record(manager, {
        type: 'webhook.delivery_retried',
        actor,
        details: { delivery_id: Number(id), event_id: delivery.eventId },
      });
    });
    const delivery = (await this.repository.getDelivery(id)) as DeliveryWithType;
    return toDeliveryDto(delivery, delivery.eventType);
  }

  // --- fan-out -------------------------------------------------------------------------------------------------

  /**
   * The spine's webhook pass (docs/webhooks.md, The event spine), in the fan-out's transaction: the active endpoints
   * read once, a delivery per endpoint that takes each event (webhook-fanout.ts), and one drain wake-up committed with
   * the deliveries it announces. The events some endpoint takes stay in the outbox, whose body the deliveries send.
   */
  async consume(events: PendingEvent[], manager: EntityManager): Promise<readonly string[]> {
    const { deliveries, heard } = fanOut(events, await this.repository.activeEndpoints(manager));
    if (deliveries.length && (await this.repository.insertDeliveries(deliveries, manager)) > 0) {
      await this.jobs.send(DRAIN_QUEUE, {}, { manager });
      this.drainAfterCommit = true;
    }
    return heard;
  }

  /** The pass committed its deliveries: this instance's drain starts now, not at its next poll (up to 0.5 s later). */
  committed(): void {
    if (!this.drainAfterCommit) return;
    this.drainAfterCommit = false;
    this.jobs.wake(DRAIN_QUEUE);
  }

  // --- sending -------------------------------------------------------------------------------------------------

  /**
   * Sends every due attempt: claimed as many at a time as there are free slots (SKIP LOCKED, so two workers or
   * instances never hold the same one), up to DRAIN_CONCURRENCY in flight, for at most DRAIN_MS; stops at the first claim that finds none. Returns how many.
   */
  async deliverDue(): Promise<number> {
    const until = Date.now() + DRAIN_MS;
    const sending = new Set<Promise<void>>();
    let sent = 0;
    let failure: unknown;
    while (Date.now() < until && failure === undefined) {
      if (sending.size >= DRAIN_CONCURRENCY) {
        await Promise.race(sending);
        continue;
      }
      // As many as there are free slots, in one statement.
      const claimed = await this.repository.claimDue(DRAIN_CONCURRENCY - sending.size);
      if (claimed.length === 0) break;
      for (const next of claimed) {
        sent++;
        const send: Promise<void> = this.sendAndFinish(next)
          .catch((err: unknown) => {
            failure ??= err;
          })
          .finally(() => sending.delete(send));
        sending.add(send);
      }
    }
    await Promise.all(sending);
    if (failure !== undefined) throw failure as Error;
    // Cut short with attempts still due: wake another worker rather than wait for the sweep.
    if (Date.now() >= until) await this.jobs.send(DRAIN_QUEUE, {});
    return sent;
  }

  private async sendAndFinish(claimed: ClaimedDelivery): Promise<void> {
    const result = await this.send(claimed);
    await this.finish(claimed.id, claimed, result);
  }

  private async finish(
    deliveryId: string,
    claimed: ClaimedDelivery,
    result: { ok: boolean; statusCode: number | null; error: string | null },
  ): Promise<void> {
    const schedule = this.config.webhooks.retryScheduleSeconds;
    // A delivered or failed attempt is one statement; a retry also schedules its job, in the same transaction.
    if (result.ok) {
      this.outcomes.inc({ outcome: 'delivered' });
      await this.repository.finishAttempt(deliveryId, claimed.attempts, {
        status: 'delivered',
        statusCode: result.statusCode,
        error: null,
        nextAttemptInSeconds: null,
      });
    } else if (claimed.attempts <= schedule.length && claimed.endpointActive) {
      const delay = schedule[claimed.attempts - 1];
      this.outcomes.inc({ outcome: 'retry' });
      await this.dataSource.transaction(async (manager) => {
        const recorded = await this.repository.finishAttempt(
          deliveryId,
          claimed.attempts,
          { status: 'pending', statusCode: result.statusCode, error: result.error, nextAttemptInSeconds: delay },
          manager,
        );
        if (recorded) await this.jobs.send(RETRY_QUEUE, { deliveryId }, { manager, startAfterSeconds: delay });
      });
    } else {
      this.outcomes.inc({ outcome: 'failed' });
      await this.repository.finishAttempt(deliveryId, claimed.attempts, {
        status: 'failed',
        statusCode: result.statusCode,
        error: result.error,
        nextAttemptInSeconds: null,
      });
    }
  }

  private async send(claimed: ClaimedDelivery): Promise<{ ok: boolean; statusCode: number | null; error: string | null }> {
    if (!claimed.endpointActive) return { ok: false, statusCode: null, error: 'the endpoint is inactive' };
    const secret = await this.secrets.reveal(claimed.endpointId, claimed.storedSecret);
    if (secret === null) return { ok: false, statusCode: null, error: UNREADABLE_SECRET };
    // Resolved again at every send: a name that now points inside the network is refused, and the request goes
    // to exactly the address that was checked.
    const target = await resolveWebhookTarget(claimed.url, this.config.webhooks.allowPrivateNetworks);
    if ('problem' in target) return { ok: false, statusCode: null, error: target.problem };
    const body = JSON.stringify(claimed.payload);
    const sentAt = new Date();
    const signature = new Webhook(secret).sign(claimed.eventId, sentAt, body);
    const headers = {
      'webhook-id': claimed.eventId,
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'webhook-signature': signature,
    };
    return postOnce(target, headers, body);
  }

  /** 404 also for an endpoint outside the credential's products: it is not told apart from one that does not exist. */
  private async endpointOr404(id: number, manager?: EntityManager, products: ProductScope = ALL_PRODUCTS): Promise<WebhookEndpoint> {
    const endpoint = await this.repository.getEndpoint(id, manager);
    if (!endpoint || !productScopeWithin(endpoint.productIds, products)) throw AppError.notFound('Webhook');
    return endpoint;
  }

  private async endpointIn(id: number, products: ProductScope, manager: EntityManager): Promise<boolean> {
    if (products === null) return true;
    const endpoint = await this.repository.getEndpoint(id, manager);
    return endpoint !== null && productScopeWithin(endpoint.productIds, products);
  }

  private async endpointDtos(endpoints: WebhookEndpoint[]): Promise<WebhookEndpointDto[]> {
    const codes = await this.products.codesById(endpoints.flatMap((e) => e.productIds ?? []));
    return endpoints.map((e) => toEndpointDto(e, codes));
  }

  private static checkEvents(events: string[] | undefined): void {
    if (events && events.includes(ALL_EVENTS) && events.length > 1)
      throw AppError.field('events', 'events: "*" means every event and stands alone');
  }

  /** What is wrong with an endpoint's URL (its form, or where it resolves), or undefined when it may receive deliveries. */
  async urlProblem(url: string): Promise<string | undefined> {
    const target = await resolveWebhookTarget(url, this.config.webhooks.allowPrivateNetworks);
    return 'problem' in target ? target.problem : undefined;
  }

  private async checkUrl(url: string): Promise<void> {
    const problem = await this.urlProblem(url);
    if (problem !== undefined) throw AppError.field('url', problem);
  }
}
