import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { RecordedChange } from '../../events/event-recorder';
import { param, raw, runStatement, sql } from '../../database/statement';
import { SEAT_COLUMNS } from '../seats/seats.repository';

/** The primary key whose violation is TRIAL_ALREADY_USED: one trial per product and machine, ever. */
export const TRIAL_KEY = 'trials_pkey';

/** What a trial claims: the product and machine, its licence, who asked. */
export interface TrialClaim {
  productId: number;
  machineFingerprint: string;
  licenseId: number;
  customerEmail: string | null;
  ip: string | null;
  hostname: string | null;
  os: string | null;
  appVersion: string | null;
  now: Date;
}

/** The IPs that started the most trials since a time: how many, for how many products, the latest. */
export interface TrialsFromIp {
  ip: string;
  trials: number;
  products: number;
  latest: Date;
}

/**
 * Trials (docs/licences.md, Trials). Style: named SQL with typed rows (docs/architecture.md, Database style). The trial's
 * claim and its licence's seat are one statement with the trial's event (EventRecorder.recordWith).
 */
@Injectable()
export class TrialsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Claims the product and machine (a second claim violates TRIAL_KEY, whatever became of the first) and binds the seat. */
  start(claim: TrialClaim): RecordedChange {
    const productId = param(claim.productId);
    const fingerprint = param(claim.machineFingerprint);
    const ip = param(claim.ip);
    const now = param(claim.now);
    return {
      name: 'trial-start',
      ctes: sql`claim AS (
        INSERT INTO trials (product_id, machine_fingerprint, license_id, customer_email, ip, created_at)
        VALUES (${productId}::int, ${fingerprint}::varchar, ${claim.licenseId}::int, ${claim.customerEmail}::varchar, ${ip}::varchar, ${now}::timestamptz)
        RETURNING license_id
      ), change AS (
        INSERT INTO activations (license_id, product_id, machine_fingerprint, hostname, os, app_version, ip, activated_at, last_seen_at)
        SELECT license_id, ${productId}::int, ${fingerprint}::varchar, ${claim.hostname}::varchar, ${claim.os}::varchar,
          ${claim.appVersion}::varchar, ${ip}::varchar, ${now}::timestamptz, ${now}::timestamptz FROM claim
        RETURNING ${raw(SEAT_COLUMNS)})`,
    };
  }

  /** The licence of the newest trial of this product for this e-mail (lower-cased), if any. */
  async newestTrialFor(productId: number, customerEmail: string, manager?: EntityManager): Promise<number | null> {
    const rows = await runStatement<{ license_id: number }>(
      manager ?? this.dataSource.manager,
      'trial-newest-for-email',
      sql`SELECT license_id FROM trials WHERE product_id = ${productId} AND customer_email = ${customerEmail.toLowerCase()} ORDER BY created_at DESC LIMIT 1`,
    );
    return rows[0]?.license_id ?? null;
  }

  /** The IPs with the most trials of these products (null: every product) started since `since`, most first (docs/licences.md, Trials). */
  async busiestIps(since: Date, limit: number, products: readonly number[] | null): Promise<TrialsFromIp[]> {
    const productsParam = param(products);
    const rows = await runStatement<{ ip: string; trials: number; products: number; latest: Date }>(
      this.dataSource.manager,
      'trials-busiest-ips-by-product',
      sql`SELECT ip, count(*)::int AS trials, count(DISTINCT product_id)::int AS products, max(created_at) AS latest
       FROM trials WHERE created_at >= ${since} AND ip IS NOT NULL AND (${productsParam}::int[] IS NULL OR product_id = ANY(${productsParam}::int[]))
       GROUP BY ip ORDER BY count(*) DESC, max(created_at) DESC, ip LIMIT ${limit}`,
    );
    return rows;
  }
}
