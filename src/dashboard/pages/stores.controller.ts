import { Actor, CurrentActor } from '../../common/auth/actor';
import { Get, Inject, Param, Post, Query, Render, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppError, FieldError } from '../../common/errors/app-error';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { LICENSE_TYPES } from '../../licenses/license-type';
import { ON_END_ACTIONS, STORE_NAMES } from '../../licenses/store-names';
import { ProductsService } from '../../products/products.service';
import { CreateStorePlanDto, StorePlanDto, UpdateStorePlanDto } from '../../stores/dto/store-plan.dto';
import { StoreEventsService } from '../../stores/store-events.service';
import { storeFeatureStates } from '../../stores/store-features';
import { StorePlansService } from '../../stores/store-plans.service';
import { checkDto } from '../http/check-dto';
import { summariseErrors } from '../http/form-errors';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { asFormBody, FormBody, formList, formText } from '../http/forms';
import { DashboardIdPipe } from '../http/id-param';
import { setFlash } from '../http/view-locals';

export const STORE_EVENTS_PAGE_SIZE = 50;

/** The form's labels by the API's field names, in the form's order (docs/dashboard.md, Forms). */
export const STORE_PLAN_FIELD_LABELS = {
  store: 'Store',
  price_id: 'Price id',
  product_code: 'Product',
  license_type: 'Licence type',
  limits: 'Maximum installations (seats)',
  features: 'Features',
  grace_days: 'Grace days',
  on_end: 'When the subscription ends',
};

interface PlanForm {
  store: string;
  price_id: string;
  product_code: string;
  license_type: string;
  max_installations: string;
  features: string[];
  grace_days: string;
  on_end: string;
}

const emptyForm = (): PlanForm => ({
  store: 'stripe',
  price_id: '',
  product_code: '',
  license_type: 'MONTHLY',
  max_installations: '',
  features: [],
  grace_days: '7',
  on_end: 'expire',
});

/** The settings the Stores page says are set or not (never their values). */
const STORE_SECRETS: {
  name: string;
  key: 'stripeWebhookSecret' | 'stripeApiKey' | 'paddleWebhookSecret' | 'paddleApiKey' | 'lemonsqueezyWebhookSecret';
  use: string;
}[] = [
  { name: 'STRIPE_WEBHOOK_SECRET', key: 'stripeWebhookSecret', use: 'verifies Stripe events (unset: the endpoint answers 404)' },
  {
    name: 'STRIPE_API_KEY',
    key: 'stripeApiKey',
    use: 'reads the line items of one-time Checkout payments and the invoice a refunded payment paid',
  },
  { name: 'PADDLE_WEBHOOK_SECRET', key: 'paddleWebhookSecret', use: 'verifies Paddle events (unset: the endpoint answers 404)' },
  { name: 'PADDLE_API_KEY', key: 'paddleApiKey', use: "reads a buyer's e-mail (customers.get) when no customer event brought it" },
  {
    name: 'LEMONSQUEEZY_WEBHOOK_SECRET',
    key: 'lemonsqueezyWebhookSecret',
    use: 'verifies Lemon Squeezy events (unset: the endpoint answers 404)',
  },
];

/** Stores (docs/stores.md): which secrets are set, the plans (create, edit, delete) and the recent events with replay. */
@DashboardController('stores')
export class StoresPageController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly plans: StorePlansService,
    private readonly events: StoreEventsService,
    private readonly products: ProductsService,
  ) {}

  /** `needs_attention=true` shows only the events a seller must look at (docs/stores.md, Needs attention). */
  @Get()
  async list(
    @Query('license_id') licenseQuery: unknown,
    @Query('needs_attention') attentionQuery: unknown,
    @Res() res: Response,
  ): Promise<void> {
    await this.renderList(res, 200, emptyForm(), [], { licenseId: licenseFilter(licenseQuery), needsAttention: attentionQuery === 'true' });
  }

  @Post('plans')
  async create(@Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor): Promise<void> {
    const form = readPlanForm(asFormBody(req.body));
    const { value, errors } = await checkDto(CreateStorePlanDto, planInput(form, false));
    if (!value) return this.renderList(res, 400, form, errors);
    try {
      const plan = await this.plans.create(value, actor);
      setFlash(
        req,
        'success',
        `Plan created: ${plan.store} price ${plan.price_id} now sells ${plan.product_code} ${plan.license_type} licences.`,
      );
      res.redirect(303, '/stores');
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      await this.renderList(res, err.status, form, refusal(err));
    }
  }

  @Get('plans/:id/edit')
  async edit(@Param('id', DashboardIdPipe) id: number, @Res() res: Response): Promise<void> {
    await this.renderEdit(res, 200, id, formOf(await this.plans.get(id)), []);
  }

  @Post('plans/:id')
  async update(
    @Param('id', DashboardIdPipe) id: number,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentActor() actor: Actor,
  ): Promise<void> {
    await this.plans.get(id);
    const form = readPlanForm(asFormBody(req.body));
    const { value, errors } = await checkDto(UpdateStorePlanDto, planInput(form, true));
    if (!value) return this.renderEdit(res, 400, id, form, errors);
    try {
      const plan = await this.plans.update(id, value, actor);
      setFlash(
        req,
        'success',
        `Plan for ${plan.price_id} saved: new purchases get its terms; existing licences change at their next plan change.`,
      );
      res.redirect(303, '/stores');
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500 || err.status === 404) throw err;
      await this.renderEdit(res, err.status, id, form, refusal(err));
    }
  }

  /** The confirmation step before a delete (a GET shows what will go; only the POST from this page deletes). */
  @Get('plans/:id/delete')
  @Render('stores/delete')
  async confirmDelete(@Param('id', DashboardIdPipe) id: number) {
    return { title: 'Delete store plan', nav: 'stores', plan: await this.plans.get(id) };
  }

  @Post('plans/:id/delete')
  async delete(
    @Param('id', DashboardIdPipe) id: number,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentActor() actor: Actor,
  ): Promise<void> {
    const plan = await this.plans.get(id);
    await this.plans.remove(id, actor);
    setFlash(req, 'success', `Plan for ${plan.price_id} deleted: its licences live on; a new purchase of that price is ignored.`);
    res.redirect(303, '/stores');
  }

  @Post('events/:id/replay')
  async replay(@Param('id', DashboardIdPipe) id: number, @Req() req: Request, @Res() res: Response): Promise<void> {
    try {
      const event = await this.events.replay(String(id));
      const outcome = event.status === 'processed' ? 'processed' : `still ${event.status}${event.error ? `: ${event.error}` : ''}`;
      setFlash(req, event.status === 'processed' ? 'success' : 'error', `Event ${event.event_id} replayed: ${outcome}.`);
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 409) throw err;
      setFlash(req, 'error', err.message);
    }
    res.redirect(303, '/stores');
  }

  private async renderList(
    res: Response,
    status: number,
    form: PlanForm,
    errors: FieldError[],
    filter: { licenseId?: number; needsAttention?: boolean } = {},
  ): Promise<void> {
    const { licenseId, needsAttention } = filter;
    const [plans, events, products, attentionCount] = await Promise.all([
      this.plans.list(),
      this.events.list({ licenseId, needsAttention: needsAttention || undefined }, STORE_EVENTS_PAGE_SIZE, 0),
      this.products.listProducts(),
      this.events.countNeedingAttention(),
    ]);
    const stores = this.config.stores;
    res.status(status).render('stores/list', {
      title: 'Stores',
      nav: 'stores',
      secrets: STORE_SECRETS.map(({ name, key, use }) => ({ name, set: Boolean(stores?.[key]), use })),
      acceptTestEvents: stores?.acceptTestEvents === true,
      plans,
      events: events.items.map((e) => ({ ...e, replayable: e.status !== 'processed' })),
      eventsTotal: events.total,
      licenseId,
      needsAttention,
      attentionCount,
      storeFeatures: storeFeatureStates(stores),
      ...this.formLocals(form, products, errors),
    });
  }

  private async renderEdit(res: Response, status: number, id: number, form: PlanForm, errors: FieldError[]): Promise<void> {
    const products = await this.products.listProducts();
    res.status(status).render('stores/edit', { title: 'Edit store plan', nav: 'stores', id, ...this.formLocals(form, products, errors) });
  }

  private formLocals(form: PlanForm, products: { code: string; name: string; availableFeatures: string[] }[], errors: FieldError[]) {
    const product = products.find((p) => p.code === form.product_code);
    return {
      form,
      storeNames: STORE_NAMES.map((name) => ({ name, selected: name === form.store })),
      products: products.map((p) => ({ code: p.code, name: p.name, selected: p.code === form.product_code })),
      licenseTypes: LICENSE_TYPES.map((type) => ({ type, selected: type === form.license_type })),
      onEnds: ON_END_ACTIONS.map((action) => ({ action, selected: action === form.on_end })),
      features: [...new Set(products.flatMap((p) => p.availableFeatures))].map((name) => ({
        name,
        checked: form.features.includes(name),
        offered: product ? product.availableFeatures.includes(name) : true,
      })),
      ...summariseErrors(errors, STORE_PLAN_FIELD_LABELS),
    };
  }
}

function readPlanForm(body: FormBody): PlanForm {
  return {
    store: formText(body, 'store'),
    price_id: formText(body, 'price_id'),
    product_code: formText(body, 'product_code'),
    license_type: formText(body, 'license_type'),
    max_installations: formText(body, 'max_installations'),
    features: formList(body, 'features'),
    grace_days: formText(body, 'grace_days'),
    on_end: formText(body, 'on_end'),
  };
}

/** The API's input from the form: an empty seat count or feature list means the product's own (`whole`: the edit form replaces them). */
function planInput(form: PlanForm, whole: boolean): Record<string, unknown> {
  const number = (text: string) => (/^\d+$/.test(text) ? Number(text) : text);
  return {
    store: form.store,
    price_id: form.price_id,
    product_code: form.product_code,
    license_type: form.license_type,
    ...(form.max_installations ? { limits: { max_installations: number(form.max_installations) } } : whole ? { limits: {} } : {}),
    ...(form.features.length ? { features: form.features } : whole ? { features: null } : {}),
    ...(form.grace_days ? { grace_days: number(form.grace_days) } : {}),
    on_end: form.on_end,
  };
}

function formOf(plan: StorePlanDto): PlanForm {
  return {
    store: plan.store,
    price_id: plan.price_id,
    product_code: plan.product_code,
    license_type: plan.license_type,
    max_installations: plan.limits.max_installations === undefined ? '' : String(plan.limits.max_installations),
    features: plan.features ?? [],
    grace_days: String(plan.grace_days),
    on_end: plan.on_end,
  };
}

const refusal = (err: AppError): FieldError[] =>
  (err.details?.fields as FieldError[] | undefined) ?? [
    { field: (err.details?.field as string | undefined) ?? 'price_id', message: err.message },
  ];

function licenseFilter(value: unknown): number | undefined {
  return typeof value === 'string' && /^[1-9]\d{0,8}$/.test(value) ? Number(value) : undefined;
}
