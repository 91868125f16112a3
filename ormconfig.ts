import { DataSource } from 'typeorm';
import { dataSourceOptions } from './src/database/data-source-options';

/**
 * The TypeORM CLI's data source (`npx typeorm migration:show -d dist/ormconfig.js`, README.md, Migrations): the same
 * options as the server and `npm run migration:*`, migrations included. The server migrates at start-up by itself.
 */
const url = process.env.DATABASE_URL;
if (!url) {
  throw new Error(
    'ormconfig: DATABASE_URL is not set. The TypeORM CLI needs it, e.g. DATABASE_URL=postgres://user:password@host:5432/licences ' +
      'npx typeorm migration:show -d dist/ormconfig.js (for the embedded PostgreSQL under DATA_DIR use npm run migration:show).',
  );
}
export default new DataSource(dataSourceOptions(url));
