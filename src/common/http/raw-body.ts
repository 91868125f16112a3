import { INestApplication, RequestMethod, SetMetadata } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import express, { type RequestHandler } from 'express';
import { chain } from './middleware-chain';
import { refuseDeclaredOversize } from './http-hardening';

const RAW_BODY_ROUTE = 'raw-body-route';

export interface RawBodyRouteOptions {
  /** The most the body may hold, as body-parser reads it ('1mb'). */
  limit: string;
}

/**
 * The route reads its body as raw bytes (a Buffer in `req.body`), any Content-Type, up to `limit`, instead of the
 * JSON API's parsed 64 KiB: for senders that sign the exact bytes (docs/stores.md, Raw bodies). Read by
 * rawBodyParsers before routing, since the body is parsed before Nest knows the route.
 */
export const RawBodyRoute = (options: RawBodyRouteOptions) => SetMetadata(RAW_BODY_ROUTE, options);

const STREAMED_BODY_ROUTE = 'streamed-body-route';

/**
 * The route reads the request stream itself (no parser runs, any Content-Type, no size limit here): for uploads too
 * large to hold in memory, which the route must stream and bound on its own (docs/releases.md, Uploading artifacts).
 * Path parameters are allowed (each matches one segment).
 */
export const StreamedBodyRoute = () => SetMetadata(STREAMED_BODY_ROUTE, true);

/** Lets the request through unparsed: the handler reads `req` as a stream. */
const unparsed: RequestHandler = (_req, _res, next) => next();

/**
 * A route path with `:param` segments (and a trailing `*rest` wildcard) as a case-insensitive, trailing-slash-tolerant
 * pattern (Express's defaults).
 */
const routePattern = (path: string) =>
  new RegExp(
    '^' +
      path
        .split('/')
        .map((segment) =>
          segment.startsWith(':') ? '[^/]+' : segment.startsWith('*') ? '.+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
        )
        .join('/') +
      '/?$',
    'i',
  );

/** Lower-case, no trailing slash: how Express matches a route by default (case-insensitive, not strict). */
const routeKey = (method: string, path: string) => `${method.toUpperCase()} ${path.toLowerCase().replace(/\/+$/, '') || '/'}`;

const joinPath = (...parts: (string | string[] | undefined)[]) =>
  '/' +
  parts
    .map((p) => (Array.isArray(p) ? p[0] : p) ?? '')
    .map((p) => p.replace(/^\/+|\/+$/g, ''))
    .filter(Boolean)
    .join('/');

/** Every method of every controller of the app, with its controller: where Nest keeps the route metadata. */
function* routeHandlers(
  app: INestApplication,
): Generator<{ controller: new (...args: unknown[]) => unknown; name: string; handler: object }> {
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: unknown[]) => unknown) | null;
      if (!controller) continue;
      const prototype = controller.prototype as Record<string, unknown>;
      for (const name of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[name];
        if (typeof handler === 'function') yield { controller, name, handler };
      }
    }
  }
}

/**
 * The parsers of every route declared with @RawBodyRoute, by method and path (routes with parameters are not
 * supported: a declared one throws at start). `parserFor` is one map lookup, so other requests pay next to nothing.
 */
export function rawBodyParsers(app: INestApplication): { parserFor(method: string, path: string): RequestHandler | undefined } {
  const parsers = new Map<string, RequestHandler>();
  const streamed: { method: string; pattern: RegExp }[] = [];
  for (const { controller, name, handler } of routeHandlers(app)) {
    const options = Reflect.getMetadata(RAW_BODY_ROUTE, handler) as RawBodyRouteOptions | undefined;
    const isStreamed = Reflect.getMetadata(STREAMED_BODY_ROUTE, handler) === true;
    if (!options && !isStreamed) continue;
    const pathOf = (target: object) => Reflect.getMetadata(PATH_METADATA, target) as string | string[] | undefined;
    const path = joinPath(pathOf(controller), pathOf(handler));
    if (!options) {
      const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
      streamed.push({ method, pattern: routePattern(path) });
      continue;
    }
    if (path.includes(':')) throw new Error(`@RawBodyRoute on ${controller.name}.${name}: routes with parameters are not supported`);
    const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
    const limitBytes = parseLimit(options.limit);
    parsers.set(routeKey(method, path), chain(refuseDeclaredOversize(limitBytes), express.raw({ type: () => true, limit: options.limit })));
  }
  return {
    parserFor: (method, path) => {
      const parser = parsers.size === 0 ? undefined : parsers.get(routeKey(method, path));
      if (parser || streamed.length === 0) return parser;
      return streamed.some((r) => r.method === method.toUpperCase() && r.pattern.test(path)) ? unparsed : undefined;
    },
  };
}

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2 };

/** '1mb' → 1048576: the same reading as body-parser's `limit`. */
export function parseLimit(limit: string): number {
  const m = /^(\d+)\s*(b|kb|mb)$/i.exec(limit.trim());
  if (!m) throw new Error(`RawBodyRoute limit "${limit}": give bytes as <n>b, <n>kb or <n>mb`);
  return Number(m[1]) * UNITS[m[2].toLowerCase()];
}

/** What a route table answers: whether any route takes `method` on `path`. */
export interface RouteTable {
  has(method: string, path: string): boolean;
}

/**
 * Every controller route of the app, by method and path pattern (`@All` takes any method): lets the body parsers skip a
 * request no route takes, so it gets the router's 404 instead of a body-size or body-type refusal that points at the
 * body (docs/admin-api.md, Conventions). Exact paths are one map lookup; only paths with parameters are tested.
 */
export function routeTable(app: INestApplication): RouteTable {
  const exact = new Set<string>();
  const patterns: { method: string; pattern: RegExp }[] = [];
  const paths = (target: object) => {
    const value = Reflect.getMetadata(PATH_METADATA, target) as string | string[] | undefined;
    return Array.isArray(value) ? value : [value];
  };
  for (const { controller, handler } of routeHandlers(app)) {
    const methodCode = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
    if (methodCode === undefined || Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
    const method = RequestMethod[methodCode];
    for (const base of paths(controller))
      for (const sub of paths(handler)) {
        const path = joinPath(base, sub);
        if (/[:*]/.test(path)) patterns.push({ method, pattern: routePattern(path) });
        else exact.add(routeKey(method, path));
      }
  }
  return {
    has: (method, path) =>
      exact.has(routeKey(method, path)) ||
      exact.has(routeKey('ALL', path)) ||
      patterns.some((r) => (r.method === 'ALL' || r.method === method.toUpperCase()) && r.pattern.test(path)),
  };
}
