import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import express from 'express';

/**
 * What the product's fixed stack costs before the server adds anything (docs/performance.md, What bounds the floor):
 * `GET /api/v1/health/live` answering `{"status":"ok"}` from an empty app, set up as the server sets up Express
 * (no `X-Powered-By`, no ETag), with no middleware, guard, pipe, filter, logger or database.
 *   STACK=nest     NestJS on Express with one controller (the product's stack)
 *   STACK=express  Express alone with one route
 * Environment: PORT, STACK. The bench's `floor-nest` and `floor-express` rows measure it against the bare node:http
 * baseline, in the same run as `floor` (the server's own floor).
 */
@Controller('api/v1/health')
class LiveController {
  @Get('live')
  live(): { status: string } {
    return { status: 'ok' };
  }
}

@Module({ controllers: [LiveController] })
class FloorModule {}

async function main(): Promise<void> {
  const port = Number(process.env.PORT ?? 3000);
  if (process.env.STACK === 'express') {
    const app = express();
    app.disable('x-powered-by');
    app.set('etag', false);
    app.get('/api/v1/health/live', (_req, res) => {
      res.json({ status: 'ok' });
    });
    app.listen(port, '127.0.0.1');
    return;
  }
  const app = await NestFactory.create<NestExpressApplication>(FloorModule, { logger: false });
  app.disable('x-powered-by');
  app.set('etag', false);
  app.enableShutdownHooks();
  await app.listen(port, '127.0.0.1');
}

void main();
