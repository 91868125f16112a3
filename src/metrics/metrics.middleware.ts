import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { MetricsService } from './metrics.service';

/** Times every request and labels it by route template (never the raw URL: ids and keys would explode the label set). */
@Injectable()
export class MetricsMiddleware implements NestMiddleware {
  constructor(private readonly metrics: MetricsService) {}

  use(req: Request, res: Response, next: NextFunction): void {
    const start = process.hrtime.bigint();
    res.once('finish', () => {
      // Unknown paths land on a catch-all (`{/*splat}`): count them together.
      const template = (req.route as { path?: unknown } | undefined)?.path;
      const route = typeof template === 'string' && !template.includes('*') ? template : 'unmatched';
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      this.metrics.observeRequest(req.method, route, res.statusCode, seconds);
    });
    next();
  }
}
