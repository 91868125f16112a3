import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { EventConsumer } from './event-consumer';
import { EventOutboxRepository } from './event-outbox.repository';

/** Events claimed per pass; a full batch is followed at once by the next pass. */
export const FANOUT_BATCH = 100;
/** The idle poll: one indexed EXISTS per instance this often, so an event waits at most this long for its fan-out. */
export const FANOUT_POLL_MS = 200;

/**
 * Hands committed events to their consumers after commit (docs/webhooks.md, The event spine). Every instance polls; a
 * pass claims up to FANOUT_BATCH events with SKIP LOCKED (two instances never take the same event, a crashed pass
 * leaves its events pending), gives them to every consumer in its transaction, and settles them in one statement:
 * kept while a consumer refers to them, deleted otherwise.
 */
@Injectable()
export class EventFanoutService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('EventFanout');
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  private readonly consumers: EventConsumer[] = [];

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly outbox: EventOutboxRepository,
  ) {}

  onApplicationBootstrap(): void {
    this.start();
  }

  /** Starts polling (again, after `stop`), the first pass after `delayMs`. */
  start(delayMs = 0): void {
    if (!this.stopped && this.timer) return;
    this.stopped = false;
    this.next(delayMs);
  }

  async onModuleDestroy(): Promise<void> {
    await this.stop();
  }

  /** Stops polling and waits for a running pass (before the pool closes). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Adds a consumer to every pass (called while the app initialises). */
  addConsumer(consumer: EventConsumer): void {
    this.consumers.push(consumer);
  }

  /** One pass: hands up to FANOUT_BATCH pending events to the consumers; returns how many it claimed. */
  async fanOutPending(): Promise<number> {
    if (!(await this.outbox.anyPending())) return 0;
    const claimed = await this.dataSource.transaction(async (manager) => {
      const events = await this.outbox.claimPending(FANOUT_BATCH, manager);
      if (events.length === 0) return 0;
      const kept = new Set<string>();
      for (const consumer of this.consumers) for (const id of await consumer.consume(events, manager)) kept.add(id);
      const ids = events.map((e) => e.id);
      await this.outbox.settle(
        ids.filter((id) => kept.has(id)),
        ids.filter((id) => !kept.has(id)),
        manager,
      );
      return events.length;
    });
    if (claimed > 0) for (const consumer of this.consumers) consumer.committed?.();
    return claimed;
  }

  private next(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.pass().finally(() => (this.running = undefined));
    }, delayMs);
  }

  private async pass(): Promise<void> {
    let claimed = 0;
    try {
      claimed = await this.fanOutPending();
    } catch (err) {
      this.logger.warn(`event fan-out failed, retrying: ${(err as Error).message}`);
    }
    this.next(claimed >= FANOUT_BATCH ? 0 : FANOUT_POLL_MS);
  }
}
