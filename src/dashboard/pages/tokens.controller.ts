import { Get, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AdminTokensService } from '../../auth/admin-tokens.service';
import { CreateAdminTokenDto, type CreatedAdminTokenDto } from '../../auth/dto/admin-token.dto';
import { ADMIN_SCOPES, SCOPE_DESCRIPTIONS } from '../../common/auth/scopes';
import { Actor, CurrentActor } from '../../common/auth/actor';
import { AppError, FieldError } from '../../common/errors/app-error';
import { ProductsService } from '../../products/products.service';
import { checkDto } from '../http/check-dto';
import { summariseErrors } from '../http/form-errors';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { asFormBody, FormBody, formList, formText } from '../../html/forms';
import { DashboardIdPipe } from '../http/id-param';
import { setFlash } from '../http/view-locals';

const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** The form's labels by the API's field names, in the form's order (docs/dashboard.md, Forms). */
export const TOKEN_FIELD_LABELS = { name: 'Name', scopes: 'Scopes', products: 'Products', expires_at: 'Expiry date' };

interface TokenForm {
  name: string;
  scopes: string[];
  products: string[];
  expires_on: string;
}

/** Admin tokens (docs/admin-api.md, Issuing and revoking): list, issue (the token is shown on the answer page only), revoke after a confirmation. */
@DashboardController('tokens')
export class TokensPageController {
  constructor(
    private readonly tokens: AdminTokensService,
    private readonly products: ProductsService,
  ) {}

  @Get()
  async list(@Res() res: Response): Promise<void> {
    await this.render(res, 200, { name: '', scopes: [], products: [], expires_on: '' }, []);
  }

  /** No redirect on success: the token must not pass through the session or a URL, so this answer shows it once. */
  @Post()
  async create(@Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor): Promise<void> {
    const form = readTokenForm(asFormBody(req.body));
    const plain: Record<string, unknown> = { name: form.name, scopes: form.scopes };
    if (form.products.length) plain.products = form.products;
    if (form.expires_on) plain.expires_at = DATE.test(form.expires_on) ? `${form.expires_on}T23:59:59Z` : form.expires_on;
    const { value, errors } = await checkDto(CreateAdminTokenDto, plain);
    if (!value) return this.render(res, 400, form, errors);
    try {
      const created = await this.tokens.createToken(value, actor);
      await this.render(res, 201, { name: '', scopes: [], products: [], expires_on: '' }, [], created);
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      await this.render(
        res,
        err.status,
        form,
        (err.details?.fields as FieldError[] | undefined) ?? [{ field: 'name', message: err.message }],
      );
    }
  }

  @Post(':id/revoke')
  async revoke(
    @Param('id', DashboardIdPipe) id: number,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentActor() actor: Actor,
  ): Promise<void> {
    if (formText(asFormBody(req.body), 'confirm') !== 'yes') {
      setFlash(req, 'error', 'Tick the confirmation to revoke a token.');
    } else {
      try {
        const token = await this.tokens.revokeToken(id, actor);
        setFlash(req, 'success', `Token ${token.name} revoked: it stops working at once.`);
      } catch (err) {
        if (!(err instanceof AppError) || err.status !== 409) throw err;
        setFlash(req, 'error', err.message);
      }
    }
    res.redirect(303, '/tokens');
  }

  private async render(
    res: Response,
    status: number,
    form: TokenForm,
    errors: FieldError[],
    created?: CreatedAdminTokenDto,
  ): Promise<void> {
    const [tokens, products] = await Promise.all([this.tokens.listTokens({ limit: 1000, offset: 0 }), this.products.listProducts()]);
    res.status(status).render('tokens', {
      title: 'Admin tokens',
      nav: 'tokens',
      tokens: tokens.items,
      scopes: ADMIN_SCOPES.map((scope) => ({ scope, description: SCOPE_DESCRIPTIONS[scope], checked: form.scopes.includes(scope) })),
      products: products.map((p) => ({ code: p.code, name: p.name, checked: form.products.includes(p.code) })),
      form,
      ...summariseErrors(errors, TOKEN_FIELD_LABELS, [[/^scopes should not be empty$/, 'Tick at least one scope']]),
      created,
      // The token must not pass through a redirect, so the message is part of this answer (docs/dashboard.md, Messages after an action).
      ...(created && { flash: { type: 'success', message: `Token ${created.name} created: copy it below, it is shown only once.` } }),
    });
  }
}

function readTokenForm(body: FormBody): TokenForm {
  return {
    name: formText(body, 'name'),
    scopes: formList(body, 'scopes'),
    products: formList(body, 'products'),
    expires_on: formText(body, 'expires_on'),
  };
}
