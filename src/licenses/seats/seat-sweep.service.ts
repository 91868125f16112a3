import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { JobsService } from '../../jobs/jobs.service';
import { SeatsService } from './seats.service';

export const SEAT_SWEEP_QUEUE = 'seats.sweep';
/** Seats released per transaction: a backlog is worked off in short transactions, not one long one. */
const SWEEP_BATCH = 500;

/**
 * Releases dead seats within 60 s of their death (docs/licences.md, The sweep, on the job engine). Each sweep enqueues the next
 * one `seatSweepIntervalSeconds` later, so there is one chain for the whole deployment whatever the number of
 * instances (the queue keeps at most one sweep waiting and one running); a schedule every minute restarts the
 * chain if it ever breaks (the database was down when a sweep tried to enqueue its successor). The chain's
 * next job is a row in PostgreSQL, so a restart loses nothing.
 */
@Injectable()
export class SeatSweepService implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger('SeatSweep');

  constructor(
    private readonly seats: SeatsService,
    private readonly jobs: JobsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.jobs.schedule(SEAT_SWEEP_QUEUE, '* * * * *', () => this.sweepAndContinue(), {
      policy: 'stately',
      pollingIntervalSeconds: 1,
      expireInSeconds: 60,
      retryLimit: 0,
    });
  }

  /** Starts the chain at once (refused by the queue's policy when a sweep is already waiting). */
  onApplicationBootstrap(): void {
    this.jobs.send(SEAT_SWEEP_QUEUE, {}).catch((err: Error) => this.logger.warn(`starting the sweep chain failed: ${err.message}`));
  }

  /** Releases every seat dead now, in batches; returns how many. */
  async sweep(): Promise<number> {
    let total = 0;
    for (;;) {
      const { released } = await this.seats.sweepDeadSeats(SWEEP_BATCH);
      total += released;
      if (released < SWEEP_BATCH) return total;
    }
  }

  private async sweepAndContinue(): Promise<void> {
    try {
      const released = await this.sweep();
      if (released > 0) this.logger.log(`released ${released} dead seat${released === 1 ? '' : 's'}`);
    } finally {
      await this.jobs.send(SEAT_SWEEP_QUEUE, {}, { startAfterSeconds: this.config.seatSweepIntervalSeconds });
    }
  }
}
