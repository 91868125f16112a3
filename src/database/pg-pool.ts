import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';

/**
 * The pg pool behind TypeORM's PostgreSQL driver: the one place that reaches into the driver, for prepared
 * statements outside a transaction and the pool gauges. Undefined before the data source is initialised.
 */
export function pgPool(dataSource: DataSource): Pool | undefined {
  return (dataSource.driver as unknown as { master?: Pool }).master;
}
