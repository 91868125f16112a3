import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../database/data-source-options';
import { UsersRepository } from './users.repository';
import { UsersService } from './users.service';

/** Creates the dashboard user or resets its password (which ends its sessions); true when created. */
export async function createOrResetUser(databaseUrl: string, username: string, password: string): Promise<boolean> {
  const dataSource = new DataSource({ ...dataSourceOptions(databaseUrl, 1), extra: { max: 1, connectionTimeoutMillis: 10_000 } });
  await dataSource.initialize();
  try {
    return await new UsersService(new UsersRepository(dataSource)).setPassword(username, password);
  } finally {
    await dataSource.destroy();
  }
}
