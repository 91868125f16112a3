import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import { param, runStatement, sql } from '../../database/statement';
import { APP_CONFIG, type AppConfig, STAFF_SIGN_IN_WINDOW_MS, type StaffConfig, staffConfig } from '../../config/app-config';

/**
 * RATE_LIMIT_STAFF_SIGN_IN (docs/dashboard.md, Failed sign-ins): failed sign-ins per account (the username typed, known
 * or not) in a fixed 15-minute window, counted in PostgreSQL so every instance sees the same count. Past the limit each
 * attempt waits before it is checked; the account is never locked, so an attacker cannot keep its owner out.
 */
@Injectable()
export class StaffSignInLimiter {
  private readonly settings: StaffConfig;
  private readonly delays = new SerialQueues();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.settings = staffConfig(config);
  }

  /** Waits when the account is past its limit; resolves with true when it waited. */
  async beforeAttempt(username: string): Promise<boolean> {
    const [row] = await runStatement<{ failures: number }>(
      this.dataSource.manager,
      'sign-in-limiter-before-attempt',
      sql`SELECT failures FROM staff_sign_in_failures WHERE account_hash = ${accountHash(username)} AND window_started_at > now() - make_interval(secs => ${STAFF_SIGN_IN_WINDOW_MS / 1000})`,
    );
    if (!row || row.failures < this.settings.signInLimit) return false;
    // One delayed attempt at a time per account: parallel guesses queue, so ten cost ten delays, not one.
    await this.delays.run(accountHash(username), () => sleep(this.settings.signInDelayMs));
    return true;
  }

  /** Counts one failure (a wrong password, code or recovery code), starting a new window when the last one ended. */
  async failed(username: string): Promise<void> {
    const windowSeconds = param(STAFF_SIGN_IN_WINDOW_MS / 1000);
    await runStatement(
      this.dataSource.manager,
      'sign-in-limiter-failed',
      sql`INSERT INTO staff_sign_in_failures (account_hash, window_started_at, failures) VALUES (${accountHash(username)}, now(), 1)
       ON CONFLICT (account_hash) DO UPDATE SET
         failures = CASE WHEN staff_sign_in_failures.window_started_at > now() - make_interval(secs => ${windowSeconds})
                         THEN staff_sign_in_failures.failures + 1 ELSE 1 END,
         window_started_at = CASE WHEN staff_sign_in_failures.window_started_at > now() - make_interval(secs => ${windowSeconds})
                                  THEN staff_sign_in_failures.window_started_at ELSE now() END`,
    );
  }

  /** A completed sign-in clears the account's count. */
  async succeeded(username: string): Promise<void> {
    await runStatement(
      this.dataSource.manager,
      'sign-in-limiter-succeeded',
      sql`DELETE FROM staff_sign_in_failures WHERE account_hash = ${accountHash(username)}`,
    );
  }
}

/** Usernames are case-insensitive; the table holds hashes, not a list of names people tried. */
const accountHash = (username: string) => createHash('sha256').update(username.toLowerCase()).digest('hex');

/**
 * Runs tasks one after another per key, in arrival order (docs/dashboard.md, Failed sign-ins): the delay of a
 * sign-in past its limit is served in turn. A key's queue is forgotten once it drains, so idle accounts cost nothing.
 */
export class SerialQueues {
  private readonly tails = new Map<string, Promise<void>>();

  async run(key: string, task: () => Promise<unknown>): Promise<void> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const mine = previous.then(
      () => task().then(() => undefined),
      () => task().then(() => undefined),
    );
    const tail = mine.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      await mine;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Keys with a task running or waiting (for tests). */
  get size(): number {
    return this.tails.size;
  }
}
