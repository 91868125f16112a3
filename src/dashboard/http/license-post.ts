import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Response } from 'express';
import { type Actor, actorFromRequest, ALL_PRODUCTS, type ProductScope, type RequestWithActor } from '../../common/auth/actor';
import { formAction, type PostedForm } from './form-action';
import { DashboardIdPipe } from './id-param';

/** What a form posted to a licence's page (`/licenses/:id/...`) works with. */
export interface LicensePost {
  /** The licence id of the URL: anything but a positive 32-bit integer is a page that does not exist (404). */
  id: number;
  req: RequestWithActor;
  actor: Actor;
  /** The products the staff member may see (null: all). */
  scope: ProductScope;
  /** {@link formAction} back to the licence's page. */
  act: (res: Response, work: (form: PostedForm) => Promise<string>) => Promise<void>;
}

/**
 * The licence, request, actor and product scope of a form posted to a licence's page, in one parameter (the handler
 * keeps its own `@Res()`, which tells Nest the handler answers itself).
 */
export const LicensePosted = createParamDecorator((_: unknown, ctx: ExecutionContext): LicensePost => {
  const req = ctx.switchToHttp().getRequest<RequestWithActor>();
  const id = new DashboardIdPipe().transform(String(req.params.id));
  return {
    id,
    req,
    actor: actorFromRequest(req),
    scope: req.productScope ?? ALL_PRODUCTS,
    act: (res, work) => formAction(req, res, `/licenses/${id}`, work),
  };
});
