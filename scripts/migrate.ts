import { prepareRuntime } from '../src/bootstrap';

/**
 * `npm run migration:run`: applies pending migrations to DATABASE_URL, or to the embedded
 * database under DATA_DIR when DATABASE_URL is unset (the server also does this at start-up).
 */
prepareRuntime(process.env, (line) => console.log(line))
  .then(async (runtime) => {
    console.log(runtime.migrations.length ? `Applied: ${runtime.migrations.join(', ')}` : 'No pending migrations.');
    await runtime.embedded?.stop();
  })
  .catch((err: Error) => {
    console.error(err.message);
    process.exit(1);
  });
