import type { Express, Response } from 'express';

type Json = Response['json'];

/**
 * Express's `res.json` for the plain case, which is nearly every answer of the JSON API: an object serialised once
 * with JSON.stringify, `Content-Type: application/json; charset=utf-8` and `Content-Length`, then `end`. Express's
 * own walks three settings, looks the type up in mime-types, parses and re-formats it to add the charset, asks for
 * an ETag function and checks freshness on every answer, which the framework floor's profile showed
 * (docs/performance.md, Framework seams). Every case that is not the plain one goes to Express's own `json`
 * unchanged: a Content-Type or Transfer-Encoding already set, a HEAD request, a conditional request
 * (If-None-Match / If-Modified-Since, which Express may answer 304), a 204/205/304 status, a value that
 * JSON.stringify leaves undefined, and an app whose JSON settings (replacer, spaces, escape) or ETag are on.
 * Guard: `json-reply.spec.ts` compares the raw answers of both over bodies, statuses and methods.
 */
export function installJsonReply(app: Express): void {
  const { response } = app;
  const expressJson: Json = response.json;
  const plainSettings = () =>
    !app.get('json replacer') && !app.get('json spaces') && !app.get('json escape') && typeof app.get('etag fn') !== 'function';
  response.json = function json(this: Response, body?: unknown) {
    const { req, statusCode } = this;
    const headers = req.headers;
    if (
      req.method === 'HEAD' ||
      statusCode === 204 ||
      statusCode === 205 ||
      statusCode === 304 ||
      headers['if-none-match'] !== undefined ||
      headers['if-modified-since'] !== undefined ||
      this.hasHeader('content-type') ||
      this.hasHeader('transfer-encoding') ||
      !plainSettings()
    ) {
      return expressJson.call(this, body);
    }
    const text = JSON.stringify(body) as string | undefined;
    if (text === undefined) return expressJson.call(this, body);
    this.setHeader('Content-Type', 'application/json; charset=utf-8');
    this.setHeader('Content-Length', String(Buffer.byteLength(text)));
    this.end(text, 'utf8');
    return this;
  } as Json;
}
