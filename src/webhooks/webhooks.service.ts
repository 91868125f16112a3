import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { Gauge } from 'prom-client';
import { DataSource, EntityManager } from 'typeorm';
import type { EventConsumer, PendingEvent } from '../events/event-consumer';
import { EventFanoutService } from '../events/event-fanout.service';
import { EventRecorder } from '../events/event-recorder';
import { type Actor, ALL_PRODUCTS, type ProductScope, productScopeWithin } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import { apiFields, apiObject, apiTimes } from '../common/http/api-fields';
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
import { DRAIN_QUEUE, WebhookDrain } from './webhook-drain';
import { DeliveryWithType, WebhooksRepository } from './webhooks.repository';

/** `whsec_` + base64 of 32 random bytes (docs/webhooks.md, Endpoints), the format `standardwebhooks` reads. */
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** `codes`: the current code of each product id (an endpoint's limit is stored as ids, shown as codes). */
const toEndpointDto = (e: WebhookEndpoint, codes: ReadonlyMap<number, string>): WebhookEndpointDto =>
  apiObject(
    apiFields(e, 'id', 'url', 'events', 'description', 'active'),
    { products: e.productIds && e.productIds.flatMap((id) => codes.get(id) ?? []) },
    apiTimes(e, 'createdAt', 'updatedAt'),
  );

const toDeliveryDto = (d: WebhookDelivery, eventType: string): WebhookDeliveryDto =>
  apiObject(
    { id: Number(d.id) },
    apiFields(d, 'eventId'),
    { event_type: eventType },
    apiFields(d, 'status', 'attempts', 'lastStatusCode', 'lastError'),
    { next_attempt_at: d.status === 'pending' && d.nextAttemptAt ? d.nextAttemptAt.toISOString() : null },
    apiTimes(d, 'createdAt', 'deliveredAt'),
  );

/**
 * Webhooks (docs/webhooks.md). Events are written to the outbox with the change by the event recorder and fanned out to
 * deliveries after commit (EventFanoutService); WebhookDrain sends them (webhook-drain.ts).
 */
@Injectable()
export class WebhooksService implements EventConsumer, OnModuleInit {
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
    private readonly drain: WebhookDrain,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    metrics: MetricsService,
  ) {
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
    this.drain.wake();
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
