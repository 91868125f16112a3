import { Check, Column, Entity, PrimaryColumn } from 'typeorm';
import { TimestampColumn } from '../../common/timestamp-column';
import { ParentRow } from '../../common/parent-row';
import { License } from '../license.entity';

/**
 * A licence's uses in one period (docs/licences.md, Usage metering): period_start is the UTC month's start, or the
 * licence's creation for `uses_period: "none"`. Written and read by UsageRepository's SQL only.
 */
@Entity('usage_counters')
@Check('usage_counters_uses_check', `uses >= 0`)
export class UsageCounter {
  @PrimaryColumn({ name: 'license_id', type: 'int', primaryKeyConstraintName: 'usage_counters_pkey' })
  licenseId: number;

  @PrimaryColumn({ name: 'period_start', type: 'timestamptz', primaryKeyConstraintName: 'usage_counters_pkey' })
  periodStart: Date;

  @Column({ type: 'bigint', default: 0 })
  uses: string;

  @ParentRow(() => License, 'license_id', 'usage_counters_license_fkey')
  license?: License;
}

/** An idempotency key of POST /api/v1/usage, per licence, with the first 200 answer (docs/client-api.md, Usage). */
@Entity('usage_idempotency_keys')
export class UsageIdempotencyKey {
  @PrimaryColumn({ name: 'license_id', type: 'int', primaryKeyConstraintName: 'usage_idempotency_keys_pkey' })
  licenseId: number;

  @PrimaryColumn({ name: 'idempotency_key', type: 'varchar', length: 128, primaryKeyConstraintName: 'usage_idempotency_keys_pkey' })
  idempotencyKey: string;

  @Column({ name: 'request_hash', type: 'varchar', length: 64 })
  requestHash: string;

  @Column({ type: 'jsonb', nullable: true })
  answer: object | null;

  @TimestampColumn('created_at', { default: () => 'now()' })
  createdAt: Date;

  @ParentRow(() => License, 'license_id', 'usage_idempotency_keys_license_fkey')
  license?: License;
}
