import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { clusterWorkerMetrics } from './cluster-metrics';
import type { RateLimitObserver } from '../common/http/throttling';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { pgPool } from '../database/pg-pool';

/**
 * Prometheus metrics of this instance (each instance exposes its own; Prometheus sums them). With WEB_CONCURRENCY > 1
 * an instance is several worker processes: each counts its own, and /metrics answers with their sum (src/cluster).
 * A metric that every process reads from the database (the same value everywhere) says `aggregator: 'max'`.
 */
@Injectable()
export class MetricsService implements RateLimitObserver, OnModuleDestroy {
  readonly registry = new Registry();
  private readonly cluster?: ReturnType<typeof clusterWorkerMetrics>;

  private readonly httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  private readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by method and route template',
    labelNames: ['method', 'route'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  private readonly activations = new Counter({
    name: 'licence_activations_total',
    help: 'Activation attempts by result code (OK or the error code)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  private readonly rateLimited = new Counter({
    name: 'rate_limit_rejections_total',
    help: 'Requests refused with 429 by throttler name',
    labelNames: ['throttler'] as const,
    registers: [this.registry],
  });

  constructor(@InjectDataSource() dataSource: DataSource, @Inject(APP_CONFIG) config: AppConfig) {
    collectDefaultMetrics({ register: this.registry });
    if (config.clusterWorker) this.cluster = clusterWorkerMetrics(this.registry);
    const pool = () => pgPool(dataSource);
    const poolGauge = (name: string, help: string, read: (p: Pool) => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          const p = pool();
          if (p) this.set(read(p));
        },
      });
    poolGauge('db_pool_connections_total', 'Open PostgreSQL connections in the pool', (p) => p.totalCount);
    poolGauge('db_pool_connections_idle', 'Idle PostgreSQL connections in the pool', (p) => p.idleCount);
    poolGauge('db_pool_waiting_requests', 'Queries waiting for a pooled connection', (p) => p.waitingCount);
    poolGauge('db_pool_connections_max', 'Pool size limit', (p) => p.options?.max ?? 0);
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpRequests.inc({ method, route, status: String(status) });
    this.httpDuration.observe({ method, route }, seconds);
  }

  activationResult(result: string): void {
    this.activations.inc({ result });
  }

  rateLimitRejected(throttler: string): void {
    this.rateLimited.inc({ throttler });
  }

  /** This process's metrics, or in a cluster worker the sum over every worker of the instance. */
  render(): Promise<string> {
    return this.cluster ? this.cluster.scrape() : this.registry.metrics();
  }

  onModuleDestroy(): void {
    this.cluster?.stop();
  }
}
