import type { Request, Response } from 'express';
import type { ResponseObserver } from '../common/http/logging';
import type { MetricsService } from './metrics.service';

/**
 * Times every request and labels it by route template (never the raw URL: ids and keys would explode the label set).
 * Called by the request logger's `close` listener for finished responses (configureApp), not as a middleware layer
 * of its own: one listener and one router layer fewer per request.
 */
export function requestMetrics(metrics: MetricsService): ResponseObserver {
  return (req: Request, res: Response, elapsedMs: number) => {
    // Unknown paths land on a catch-all (`{/*splat}`): count them together.
    const template = (req.route as { path?: unknown } | undefined)?.path;
    const route = typeof template === 'string' && !template.includes('*') ? template : 'unmatched';
    metrics.observeRequest(req.method, route, res.statusCode, elapsedMs / 1000);
  };
}
