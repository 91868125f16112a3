import type { Worker } from 'node:cluster';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue, type Registry } from 'prom-client';

/**
 * /metrics across the workers of WEB_CONCURRENCY > 1, over the cluster's IPC channel. The worker that gets the request
 * asks the primary (SCRAPE); the primary asks every worker that is serving (COLLECT) for its registry as JSON, sums
 * them with prom-client's AggregatorRegistry.aggregate (each metric by its `aggregator`: counters and histograms are
 * summed) and sends the text back.
 */
const SCRAPE = 'licence:metrics-scrape';
const COLLECT = 'licence:metrics-collect';

/** How long the primary waits for a worker's metrics; one that does not answer (busy, dying) is left out of that scrape. */
const COLLECT_TIMEOUT_MS = 2_000;
/** How long a worker waits for the primary's aggregate. */
const SCRAPE_TIMEOUT_MS = 5_000;

type WorkerMetrics = MetricObjectWithValues<MetricValue<string>>[];

interface ScrapeMessage {
  type: typeof SCRAPE;
  id: number;
  text?: string;
  error?: string;
}

interface CollectMessage {
  type: typeof COLLECT;
  id: number;
  metrics?: WorkerMetrics;
  error?: string;
}

const isMessage = <T extends { type: string }>(message: unknown, type: T['type']): message is T =>
  typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type;

/**
 * In a cluster worker: answers the primary's requests for this worker's metrics, and returns the function that
 * /metrics calls to get the aggregate from the primary. `stop` removes the listener.
 */
export function clusterWorkerMetrics(registry: Registry): { scrape: () => Promise<string>; stop: () => void } {
  const pending = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }>();
  let nextId = 0;
  const onMessage = (message: unknown) => {
    if (isMessage<CollectMessage>(message, COLLECT)) {
      registry.getMetricsAsJSON().then(
        (metrics) => reply({ type: COLLECT, id: message.id, metrics: metrics }),
        (err: Error) => reply({ type: COLLECT, id: message.id, error: err.message }),
      );
    } else if (isMessage<ScrapeMessage>(message, SCRAPE)) {
      const request = pending.get(message.id);
      if (!request) return;
      pending.delete(message.id);
      clearTimeout(request.timer);
      if (message.text !== undefined) request.resolve(message.text);
      else request.reject(new Error(`metrics: the primary could not aggregate: ${message.error ?? 'no answer'}`));
    }
  };
  const reply = (message: CollectMessage) => process.send?.(message, undefined, undefined, () => undefined);
  process.on('message', onMessage);
  const scrape = () =>
    new Promise<string>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error('metrics: the primary did not answer in time'));
      }, SCRAPE_TIMEOUT_MS);
      pending.set(id, { resolve, reject, timer });
      const request: ScrapeMessage = { type: SCRAPE, id };
      if (!process.send?.(request, undefined, undefined, (err) => err && onMessage({ type: SCRAPE, id, error: err.message }))) {
        onMessage({ type: SCRAPE, id, error: 'no IPC channel to the primary' });
      }
    });
  return { scrape, stop: () => process.off('message', onMessage) };
}

/** In the primary: answers the workers' scrapes with the sum over `serving()` (the workers that are listening). */
export class MetricsAggregator {
  private nextId = 0;
  private readonly pending = new Map<number, (metrics: WorkerMetrics | undefined) => void>();

  constructor(private readonly serving: () => Worker[]) {}

  /** Feed every message a worker sends (cluster.on('message')); returns whether it was one of ours. */
  handle(worker: Worker, message: unknown): boolean {
    if (isMessage<CollectMessage>(message, COLLECT)) {
      this.pending.get(message.id)?.(message.metrics);
      return true;
    }
    if (isMessage<ScrapeMessage>(message, SCRAPE)) {
      const answer = (reply: Omit<ScrapeMessage, 'type' | 'id'>) => {
        if (worker.isConnected()) worker.send({ type: SCRAPE, id: message.id, ...reply }, undefined, () => undefined);
      };
      this.aggregate().then(
        (text) => answer({ text }),
        (err: Error) => answer({ error: err.message }),
      );
      return true;
    }
    return false;
  }

  /** The Prometheus text of every serving worker's metrics, aggregated. */
  async aggregate(): Promise<string> {
    const answers = await Promise.all(this.serving().map((worker) => this.collect(worker)));
    const metrics = answers.filter((m): m is WorkerMetrics => m !== undefined);
    if (metrics.length === 0) throw new Error('no worker answered');
    return AggregatorRegistry.aggregate(metrics).metrics();
  }

  private collect(worker: Worker): Promise<WorkerMetrics | undefined> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      const done = (metrics: WorkerMetrics | undefined) => {
        clearTimeout(timer);
        this.pending.delete(id);
        resolve(metrics);
      };
      const timer = setTimeout(() => done(undefined), COLLECT_TIMEOUT_MS);
      this.pending.set(id, done);
      if (!worker.isConnected()) return done(undefined);
      worker.send({ type: COLLECT, id } satisfies CollectMessage, undefined, (err) => err && done(undefined));
    });
  }
}
