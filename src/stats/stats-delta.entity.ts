import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One contribution (+n/-n) to a statistic, appended by the triggers of licenses and activations in the writing
 * transaction and folded by StatsRepository.compact (migration 1795323918361). Written and read by SQL only; the
 * entity states the table so a schema diff knows it. `day` is the UTC day of the time-based metrics, null otherwise.
 */
@Entity('stats_deltas')
@Index('stats_deltas_metric_day_idx', ['metric', 'day'])
// (product_id, metric) INCLUDE (n) WHERE day IS NULL: the undated sums read from the index alone.
@Index('stats_deltas_undated_idx', ['productId', 'metric', 'n'], { where: 'day IS NULL' })
export class StatsDelta {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'stats_deltas_pkey' })
  id: string;

  @Column({ name: 'product_id', type: 'int' })
  productId: number;

  @Column({ type: 'varchar', length: 24 })
  metric: string;

  @Column({ type: 'date', nullable: true })
  day: string | null;

  @Column({ type: 'bigint' })
  n: string;
}
