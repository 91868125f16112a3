import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import express, { type Express } from 'express';

/** The classes Node's HTTP server creates each request and response from. */
export interface RequestClasses {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
}

/**
 * Express gives every request and response its app's prototypes (`app.request`, `app.response`) with
 * `Object.setPrototypeOf` at the start of each request. An object whose prototype changes after it was made leaves
 * V8's fast paths: on Node 20 every later property access on `req` and `res` went slow, Node's own `writeHead` and
 * `setHeader` included, and Express alone with one route answered 9,800-9,900 req/s against 43,000-47,000 with this
 * (docs/performance.md, Framework seams). Here the prototypes ARE two classes that extend Node's own: each holds
 * Express's request or response methods and the app link, copied from the app, and becomes `app.request` or
 * `app.response`. Node's server then makes `req` and `res` as instances of them (`requestClasses` → `createServer`),
 * so Express's call finds the prototype already in place and changes nothing.
 * Call it before anything patches `app.response` (installJsonReply does, on whatever it finds there).
 */
export function requestClasses(app: Express): RequestClasses {
  class ExpressRequest extends IncomingMessage {}
  class ExpressResponse extends ServerResponse {}
  app.request = adopt(ExpressRequest.prototype, express.request, app.request);
  app.response = adopt(ExpressResponse.prototype, express.response, app.response);
  return { IncomingMessage: ExpressRequest, ServerResponse: ExpressResponse as RequestClasses['ServerResponse'] };
}

/** `prototype` with Express's methods and the app's own link copied onto it, typed as what it now stands for. */
function adopt<T>(prototype: object, methods: T, appOwn: T): T {
  Object.defineProperties(prototype, { ...Object.getOwnPropertyDescriptors(methods), ...Object.getOwnPropertyDescriptors(appOwn) });
  return prototype as T;
}

/**
 * Nest's Express adapter on a fresh Express app whose HTTP server makes requests and responses from the app's own
 * prototypes (`requestClasses`). The server and the tests both create the application with it. Options this server
 * never passes (HTTPS, which the reverse proxy terminates, and Nest's connection tracking) go to Nest's own server.
 */
export class ExpressServerAdapter extends ExpressAdapter {
  private readonly classes: RequestClasses;

  constructor() {
    const app = express();
    super(app);
    this.classes = requestClasses(app);
  }

  override initHttpServer(options: NestApplicationOptions): void {
    if (options.httpsOptions || options.forceCloseConnections || options.return503OnClosing) {
      super.initHttpServer(options);
      return;
    }
    this.setHttpServer(createServer(this.classes, this.getInstance()));
  }
}
