import { DataSource } from 'typeorm';
import { dataSourceOptions } from './src/database/data-source-options';

/**
 * DataSource for the TypeORM CLI (`npm run migration:run`). It needs DATABASE_URL;
 * the server itself runs migrations at start-up, also against its embedded database.
 */
const url = process.env.DATABASE_URL;
if (!url) {
  throw new Error('DATABASE_URL must be set for the TypeORM CLI (the server migrates its embedded database itself at start-up)');
}
export default new DataSource(dataSourceOptions(url));
