import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../database/data-source-options';
import { EventRecorder } from '../events/event-recorder';
import { ProductsService } from '../products/products.service';
import type { StaffRole } from './roles';
import { UsersRepository } from './users.repository';
import { UsersService } from './users.service';

/** One short-lived connection for a command-line use case, closed afterwards. */
async function withUsers<T>(databaseUrl: string, work: (users: UsersService, dataSource: DataSource) => Promise<T>): Promise<T> {
  const dataSource = new DataSource({ ...dataSourceOptions(databaseUrl, 1), extra: { max: 1, connectionTimeoutMillis: 10_000 } });
  await dataSource.initialize();
  try {
    return await work(new UsersService(new UsersRepository(dataSource), new EventRecorder(dataSource)), dataSource);
  } finally {
    await dataSource.destroy();
  }
}

/**
 * Creates the dashboard user with `role` or resets its password (which ends its sessions; an existing account keeps its
 * role), audited like any change; true when created (`npm run user:create`).
 */
export function createOrResetUser(databaseUrl: string, username: string, password: string, role: StaffRole = 'owner'): Promise<boolean> {
  return withUsers(databaseUrl, (users) => users.setPassword(username, password, role));
}

/**
 * `licence-server user create`: a new account limited to the products of `productCodes` (none: every product). Throws
 * with one line for an unknown product or a name that is taken.
 */
export function createUser(
  databaseUrl: string,
  account: { username: string; password: string; role: StaffRole; productCodes: string[] },
): Promise<void> {
  return withUsers(databaseUrl, async (users, dataSource) => {
    let products: { id: number; code: string }[] | null = null;
    if (account.productCodes.length > 0) {
      products = [];
      const catalog = ProductsService.over(dataSource);
      for (const code of new Set(account.productCodes)) {
        const product = await catalog.findByCode(code);
        if (!product) throw new Error(`unknown product code: ${code}`);
        products.push({ id: product.id, code: product.code });
      }
    }
    if (!(await users.createWithPassword(account.username, account.password, account.role, products))) {
      throw new Error(`a staff account named ${account.username} exists: use "licence-server user reset ${account.username}"`);
    }
  });
}

/** `licence-server user reset`: a new password for an existing account. Throws with one line when there is none. */
export function resetUserPassword(databaseUrl: string, username: string, password: string): Promise<void> {
  return withUsers(databaseUrl, async (users) => {
    if (!(await users.resetPassword(username, password))) {
      throw new Error(`no staff account named ${username}: use "licence-server user create ${username}"`);
    }
  });
}
