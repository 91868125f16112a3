import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import type { Request } from 'express';
import type { Observable } from 'rxjs';
import { AppError } from '../errors/app-error';

/** Whether a handler declares a @Body parameter (then its DTO and the strict pipe judge the body). */
export function takesBody(controller: object, handler: string): boolean {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handler) ?? {}) as Record<string, unknown>;
  return Object.keys(args).some((key) => Number(key.split(':')[0]) === (RouteParamtypes.BODY as number));
}

/**
 * A strict route without a @Body parameter takes no fields: a body is refused unless it is empty or `{}`, as unknown
 * fields are on routes with a DTO (docs/security.md, Review findings (round 3)). Runs after the guards, so credentials are checked first.
 */
@Injectable()
export class RefuseUnexpectedBody implements NestInterceptor {
  private readonly bodyless = new WeakMap<object, boolean>();

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const handler = context.getHandler();
    let refuses = this.bodyless.get(handler);
    if (refuses === undefined) this.bodyless.set(handler, (refuses = !takesBody(context.getClass(), handler.name)));
    if (refuses) {
      const body = context.switchToHttp().getRequest<Request>().body as unknown;
      if (Array.isArray(body) || (typeof body === 'object' && body !== null && Object.keys(body).length > 0)) {
        const first = Array.isArray(body) ? undefined : Object.keys(body)[0];
        throw first === undefined
          ? AppError.field('body', 'This route takes no request body (send none, or {})')
          : AppError.validation(Object.keys(body).map((key) => ({ field: key, message: `property ${key} should not exist` })));
      }
    }
    return next.handle();
  }
}

export const refuseUnexpectedBody = new RefuseUnexpectedBody();

/**
 * For a route whose body is optional (every field optional): no body at all reaches the DTO pipe as `{}`, so the route
 * answers as it did before it took fields. Interceptors run before pipes.
 */
@Injectable()
export class AbsentBodyAsEmpty implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<Request>();
    if (request.body === undefined) request.body = {};
    return next.handle();
  }
}
