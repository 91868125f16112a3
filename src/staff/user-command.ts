import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../database/data-source-options';
import { EventRecorder } from '../events/event-recorder';
import type { StaffRole } from './roles';
import { UsersRepository } from './users.repository';
import { UsersService } from './users.service';

/**
 * Creates the dashboard user with `role` or resets its password (which ends its sessions; an existing account keeps its
 * role), audited like any change; true when created.
 */
export async function createOrResetUser(
  databaseUrl: string,
  username: string,
  password: string,
  role: StaffRole = 'owner',
): Promise<boolean> {
  const dataSource = new DataSource({ ...dataSourceOptions(databaseUrl, 1), extra: { max: 1, connectionTimeoutMillis: 10_000 } });
  await dataSource.initialize();
  try {
    return await new UsersService(new UsersRepository(dataSource), new EventRecorder(dataSource)).setPassword(username, password, role);
  } finally {
    await dataSource.destroy();
  }
}
