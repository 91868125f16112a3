import { Get, Param, Post, Query, Render, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Actor, CurrentActor } from '../../common/auth/actor';
import { AppError, FieldError } from '../../common/errors/app-error';
import { CreateWebhookDto } from '../../webhooks/dto/webhook.dto';
import { ALL_EVENTS, WEBHOOK_EVENT_TYPES } from '../../webhooks/webhook-events';
import { WebhooksService } from '../../webhooks/webhooks.service';
import { checkDto } from '../http/check-dto';
import { summariseErrors } from '../http/form-errors';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { asFormBody, formList, formText } from '../../html/forms';
import { DashboardIdPipe } from '../http/id-param';
import { setFlash } from '../http/view-locals';
import { pageNumber, pagination } from './pagination';

export const DELIVERIES_PAGE_SIZE = 25;
const DELIVERY_ID = /^[1-9]\d{0,18}$/;

interface WebhookFormValues {
  url: string;
  events: string[];
  description: string;
}

/** The form's labels by the API's field names, in the form's order (docs/dashboard.md, Forms). */
export const WEBHOOK_FIELD_LABELS = { url: 'URL', events: 'Events', description: 'Description' };

const emptyForm = (): WebhookFormValues => ({ url: '', events: [], description: '' });
const describeErrors = (errors: FieldError[]) => errors.map((e) => e.message).join('; ');

@DashboardController('webhooks')
export class WebhooksPagesController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Get()
  async list(@Res() res: Response): Promise<void> {
    await this.renderList(res, 200, emptyForm(), []);
  }

  /** The admin API's validation and service; the secret is rendered once on the answer page and stored nowhere else. */
  @Post()
  async create(@Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor): Promise<void> {
    const body = asFormBody(req.body);
    const form: WebhookFormValues = {
      url: formText(body, 'url'),
      events: formList(body, 'events'),
      description: formText(body, 'description'),
    };
    const events = form.events.includes(ALL_EVENTS) ? [ALL_EVENTS] : form.events;
    const checked = await checkDto(CreateWebhookDto, { url: form.url, events, description: form.description || null });
    // Every error in one answer (docs/dashboard.md, Forms): the URL's own check runs even when another field failed.
    const errors = [...checked.errors];
    if (form.url && !errors.some((e) => e.field === 'url')) {
      const problem = await this.webhooks.urlProblem(form.url);
      if (problem !== undefined) errors.push({ field: 'url', message: problem });
    }
    if (!checked.value || errors.length) return this.renderList(res, 400, form, errors);
    try {
      const created = await this.webhooks.createEndpoint(checked.value, actor);
      res.status(201).render('webhooks/secret', {
        title: 'Webhook created',
        nav: 'webhooks',
        endpoint: created,
        secret: created.secret,
        created: true,
        flash: { type: 'success', message: 'Endpoint created: copy its signing secret below, it is shown only once.' },
      });
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 400) throw err;
      await this.renderList(res, 400, form, (err.details?.fields as FieldError[] | undefined) ?? [{ field: 'url', message: err.message }]);
    }
  }

  @Get(':id')
  @Render('webhooks/show')
  async show(@Param('id', DashboardIdPipe) id: number, @Query('page') pageQuery: unknown) {
    const endpoint = await this.endpointOr404(id);
    const page = pageNumber(pageQuery);
    const deliveries = await this.webhooks.listDeliveries(id, DELIVERIES_PAGE_SIZE, (page - 1) * DELIVERIES_PAGE_SIZE);
    return {
      title: endpoint.url,
      nav: 'webhooks',
      endpoint,
      allEvents: endpoint.events.includes(ALL_EVENTS),
      deliveries: deliveries.items,
      pagination: pagination(`/webhooks/${id}`, {}, page, DELIVERIES_PAGE_SIZE, deliveries.total),
    };
  }

  @Post(':id/deactivate')
  async deactivate(@Param('id', DashboardIdPipe) id: number, @Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor) {
    await this.act(req, res, id, async () => {
      await this.webhooks.updateEndpoint(id, { active: false }, actor);
      return 'Endpoint deactivated: it receives nothing until activated again.';
    });
  }

  @Post(':id/activate')
  async activate(@Param('id', DashboardIdPipe) id: number, @Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor) {
    await this.act(req, res, id, async () => {
      await this.webhooks.updateEndpoint(id, { active: true }, actor);
      return 'Endpoint activated.';
    });
  }

  @Post(':id/rotate-secret')
  async rotate(@Param('id', DashboardIdPipe) id: number, @Res() res: Response, @CurrentActor() actor: Actor): Promise<void> {
    const { secret } = await this.webhooks.rotateSecret(id, actor);
    const endpoint = await this.webhooks.getEndpoint(id);
    res.status(200).render('webhooks/secret', {
      title: 'Secret rotated',
      nav: 'webhooks',
      endpoint,
      secret,
      created: false,
      flash: { type: 'success', message: 'Secret rotated: deliveries are signed with the new secret from now on.' },
    });
  }

  /** The confirmation step before a delete (a GET shows what will go; only the POST from this page deletes). */
  @Get(':id/delete')
  @Render('webhooks/delete')
  async confirmDelete(@Param('id', DashboardIdPipe) id: number) {
    const endpoint = await this.endpointOr404(id);
    return { title: 'Delete webhook', nav: 'webhooks', endpoint };
  }

  @Post(':id/delete')
  async delete(@Param('id', DashboardIdPipe) id: number, @Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor) {
    await this.webhooks.deleteEndpoint(id, actor);
    setFlash(req, 'success', 'Endpoint deleted with its deliveries.');
    res.redirect(303, '/webhooks');
  }

  @Post(':id/deliveries/:deliveryId/retry')
  async retry(
    @Param('id', DashboardIdPipe) id: number,
    @Param('deliveryId') deliveryId: string,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentActor() actor: Actor,
  ): Promise<void> {
    if (!DELIVERY_ID.test(deliveryId)) throw AppError.notFound('Webhook delivery');
    await this.act(req, res, id, async () => {
      const delivery = await this.webhooks.retryDelivery(deliveryId, actor);
      return `Delivery ${delivery.id} (${delivery.event_type}) queued again.`;
    });
  }

  /** Post/redirect/get back to the endpoint's page; a refusal (e.g. retrying a delivered one) becomes the message. */
  private async act(req: Request, res: Response, id: number, work: () => Promise<string>): Promise<void> {
    await this.endpointOr404(id);
    try {
      setFlash(req, 'success', await work());
    } catch (err) {
      if (!(err instanceof AppError) || err.status === 404 || err.status >= 500) throw err;
      const fields = err.details?.fields as FieldError[] | undefined;
      setFlash(req, 'error', fields?.length ? describeErrors(fields) : err.message);
    }
    res.redirect(303, `/webhooks/${id}`);
  }

  /** The service's 404 becomes the dashboard's not-found page. */
  private endpointOr404(id: number) {
    return this.webhooks.getEndpoint(id);
  }

  private async renderList(res: Response, status: number, form: WebhookFormValues, errors: FieldError[]): Promise<void> {
    res.status(status).render('webhooks/list', {
      title: 'Webhooks',
      nav: 'webhooks',
      endpoints: await this.webhooks.listEndpoints(),
      form,
      formAll: form.events.includes(ALL_EVENTS),
      eventTypes: WEBHOOK_EVENT_TYPES.map((type) => ({ type, checked: form.events.includes(type) })),
      ...summariseErrors(errors, WEBHOOK_FIELD_LABELS, [[/^events must contain at least 1 elements$/, 'Tick at least one event']]),
    });
  }
}
