import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { OpenAPIObject, ResponseObject } from '@nestjs/swagger';
import type request from 'supertest';
import type { Response } from 'supertest';

type Methods = 'get' | 'put' | 'post' | 'delete' | 'patch';
const METHODS: readonly Methods[] = ['get', 'put', 'post', 'delete', 'patch'];
const DOC_ID = 'openapi';

interface Route {
  template: string;
  pattern: RegExp;
  params: number;
}

const safeDecode = (path: string) => {
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
};
const mediaType = (contentType: string | undefined) => (contentType ?? '').split(';')[0].trim().toLowerCase();

/**
 * Checks real responses against the OpenAPI document the app serves: the status must be documented for the
 * operation, and a documented body must have a documented media type and validate against its schema
 * (ajv with formats, OpenAPI 3.0 `nullable`); headers documented as required must be present and valid.
 * Requests to paths or methods the document does not describe (dashboard, unknown routes) are not checked.
 */
export class OpenApiConformance {
  private readonly ajv: Ajv;
  private readonly routes: Route[];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly document: OpenAPIObject) {
    this.ajv = new Ajv({ strict: false, validateSchema: false });
    addFormats(this.ajv);
    // Only the components as the root of references: compiling against the whole document costs ~50x more.
    this.ajv.addSchema({ components: document.components ?? {} }, DOC_ID);
    this.routes = Object.keys(document.paths)
      .map((template) => {
        const source = template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'));
        return { template, pattern: new RegExp(`^${source.join('[^/]+')}$`), params: source.length - 1 };
      })
      // A literal segment wins over a parameter, as in the router.
      .sort((a, b) => a.params - b.params);
  }

  /** The problem with this response, or undefined when it conforms (or is not an operation of the document). */
  check(res: Response): string | undefined {
    const req = (res as Response & { req?: { method?: string; path?: string } }).req;
    const method = req?.method?.toLowerCase() as Methods | undefined;
    if (!method || !METHODS.includes(method) || !req?.path) return undefined;
    const path = safeDecode(req.path.split('?')[0]).replace(/(.)\/+$/, '$1');
    const route = this.routes.find((r) => r.pattern.test(path) && this.document.paths[r.template][method]);
    if (!route) return undefined;
    const operation = this.document.paths[route.template][method]!;
    const where = `${method.toUpperCase()} ${route.template} → ${res.status}`;
    const documented = operation.responses[String(res.status)] as ResponseObject | undefined;
    if (!documented) {
      return `OpenAPI: ${where} is not documented (documented: ${Object.keys(operation.responses).join(', ')}); body ${res.text?.slice(0, 300)}`;
    }
    for (const [name, header] of Object.entries(documented.headers ?? {})) {
      const value = res.headers[name.toLowerCase()] as string | undefined;
      if (value === undefined) {
        if ('required' in header && header.required) return `OpenAPI: ${where} lacks the required header ${name}`;
        continue;
      }
      const schema = 'schema' in header ? (header.schema as { type?: string } | undefined) : undefined;
      if (schema?.type === 'integer' && !/^-?\d+$/.test(value)) return `OpenAPI: ${where} header ${name}: ${value} is not an integer`;
    }
    if (!documented.content) return undefined;
    const type = mediaType(res.headers['content-type']);
    if (!(type in documented.content)) {
      return `OpenAPI: ${where} answered ${type || 'no content type'}, documented: ${Object.keys(documented.content).join(', ')}`;
    }
    const validate = this.validator(`${route.template} ${method} ${res.status} ${type}`, documented.content[type].schema ?? {});
    const body: unknown = type === 'application/json' ? res.body : res.text;
    // Binary bodies (a download) are bytes, not text: their schema (a binary string) has nothing more to check.
    if (body === undefined && documented.content[type].schema && (documented.content[type].schema as { format?: string }).format === 'binary')
      return undefined;
    if (validate(body)) return undefined;
    const errors = this.ajv.errorsText(validate.errors, { dataVar: 'body', separator: '; ' });
    return `OpenAPI: ${where} body does not match its schema: ${errors}; body ${JSON.stringify(body).slice(0, 500)}`;
  }

  private validator(key: string, schema: object): ValidateFunction {
    let validate = this.validators.get(key);
    if (!validate) {
      // The response's own schema, its `#/components/...` references pointed at the components added above.
      validate = this.ajv.compile(JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, `"${DOC_ID}#/components/`)) as object);
      this.validators.set(key, validate);
    }
    return validate;
  }
}

type SupertestAgent = ReturnType<typeof request>;

/**
 * Wraps supertest so that every response is also checked by `conformance` once the test's own expectations
 * pass: a non-conforming response rejects the request's promise (or reaches `.end(cb)` as the error).
 */
export function conformant(agent: SupertestAgent, conformance: OpenApiConformance): SupertestAgent {
  for (const key of Object.keys(agent) as (keyof SupertestAgent)[]) {
    // request(app)'s verbs are own closures over the app that never use `this`, so calling one detached is safe.
    const make = (agent as unknown as Record<string, unknown>)[key] as (url: string) => request.Test;
    if (typeof make !== 'function') continue;
    (agent as unknown as Record<string, (url: string) => request.Test>)[key] = (url: string) => {
      const test = make(url) as request.Test & { assert(err: unknown, res: Response, fn?: (err: unknown, res: Response) => void): void };
      const assert = test.assert.bind(test);
      test.assert = (resError, res, fn) =>
        assert(resError, res, (err, checked) => {
          const problem = !err && checked ? conformance.check(checked) : undefined;
          fn?.call(test, problem ? new Error(problem) : err, checked);
        });
      return test;
    };
  }
  return agent;
}
