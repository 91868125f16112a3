import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One contribution (+n/-n) to a statistic, appended by the triggers of licenses and activations in the writing
 * transaction and folded by StatsRepository.compact (migrations StatsCounters, StatsHourly). Written and read by SQL
 * only; the entity states the table so a schema diff knows it. `hour` is the UTC hour (its start, as a timestamp
 * without time zone) of the clock-driven metrics, null otherwise.
 */
@Entity('stats_deltas')
// (metric, hour) INCLUDE (product_id, n): the hourly sums read from the index alone.
@Index('stats_deltas_metric_hour_idx', ['metric', 'hour', 'productId', 'n'])
// (product_id, metric) INCLUDE (n) WHERE hour IS NULL: the undated sums read from the index alone.
@Index('stats_deltas_undated_idx', ['productId', 'metric', 'n'], { where: 'hour IS NULL' })
export class StatsDelta {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'stats_deltas_pkey' })
  id: string;

  @Column({ name: 'product_id', type: 'int' })
  productId: number;

  @Column({ type: 'varchar', length: 24 })
  metric: string;

  @Column({ type: 'timestamp', nullable: true })
  hour: Date | null;

  @Column({ type: 'bigint' })
  n: string;
}
