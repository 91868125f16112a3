import { Get, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Actor, CurrentActor } from '../../common/auth/actor';
import type { FieldError } from '../../common/errors/app-error';
import type { Product } from '../../products/product.entity';
import { UpdateProductDto } from '../../products/dto/product.dto';
import { ProductsService } from '../../products/products.service';
import { checkDto } from '../http/check-dto';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { asFormBody, formText } from '../../html/forms';
import { DashboardIdPipe } from '../http/id-param';
import { setFlash } from '../http/view-locals';

/** The trial form's fields as typed; empty days turns self-service trials off. */
interface TrialForm {
  days: string;
  max_installations: string;
}

const formOf = (product: Product): TrialForm => ({
  days: product.trial ? String(product.trial.days) : '',
  max_installations: product.trial?.max_installations ? String(product.trial.max_installations) : '',
});

/** A typed number as the API's JSON would carry it: digits become a number, anything else stays text (and is refused). */
const numberOrText = (value: string): number | string => (/^\d{1,9}$/.test(value) ? Number(value) : value);

/**
 * Products and their self-service trials (docs/licences.md, Trials): the trial is set here with the admin API's
 * rules and service (PUT /products/{id} with `trial`), audited as product.updated. Features of a trial stay the
 * admin API's (the default: all of the product's).
 */
@DashboardController('products')
export class ProductsPageController {
  constructor(private readonly products: ProductsService) {}

  @Get()
  async list(@Res() res: Response): Promise<void> {
    await this.render(res, 200);
  }

  @Post(':id/trial')
  async setTrial(
    @Param('id', DashboardIdPipe) id: number,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentActor() actor: Actor,
  ): Promise<void> {
    const product = await this.products.getProduct(id);
    const body = asFormBody(req.body);
    const form: TrialForm = { days: formText(body, 'days'), max_installations: formText(body, 'max_installations') };
    const trial = form.days
      ? {
          ...(product.trial?.features ? { features: product.trial.features } : {}),
          days: numberOrText(form.days),
          ...(form.max_installations ? { max_installations: numberOrText(form.max_installations) } : {}),
        }
      : null;
    const { value, errors } = await checkDto(UpdateProductDto, { trial });
    if (!value) return this.render(res, 400, { id, form, errors });
    const saved = await this.products.updateProduct(id, value, actor);
    setFlash(
      req,
      'success',
      saved.trial
        ? `${saved.code}: self-service trials of ${saved.trial.days} days, ${saved.trial.max_installations ?? 1} machine(s) each.`
        : `${saved.code}: self-service trials are off.`,
    );
    res.redirect(303, '/products');
  }

  private async render(res: Response, status: number, failed?: { id: number; form: TrialForm; errors: FieldError[] }): Promise<void> {
    const products = await this.products.listProducts();
    res.status(status).render('products/list', {
      title: 'Products',
      nav: 'products',
      products: products.map((p) => {
        const mine = failed?.id === p.id;
        return {
          id: p.id,
          code: p.code,
          name: p.name,
          active: p.active,
          trial: p.trial,
          form: mine ? failed.form : formOf(p),
          errors: mine ? failed.errors.map((e) => e.message.replace(/^trial\.?/, 'Trial ')) : [],
        };
      }),
    });
  }
}
