import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { writeFileSync } from 'node:fs';
import { AppModule } from '../src/app.module';
import { AppConfig } from '../src/config/app-config';
import { createOpenApiDocument } from '../src/openapi';

/**
 * Writes the OpenAPI document (as served at /api/docs-json) to the file named by the first argument, or stdout.
 * Nest's preview mode builds the module graph without instantiating providers: no database, no keys, no secrets.
 */
async function main(): Promise<void> {
  const config = { rateLimits: {}, apiKeys: [] } as unknown as AppConfig;
  const app = await NestFactory.create(AppModule.forRoot(config), { preview: true, logger: false, abortOnError: false });
  const text = JSON.stringify(await createOpenApiDocument(app), null, 2) + '\n';
  if (process.argv[2]) writeFileSync(process.argv[2], text);
  else process.stdout.write(text);
}

main().catch((err: unknown) => {
  process.stderr.write(`export-openapi: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
