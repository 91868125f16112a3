import { HttpCode, Param, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { CreateRelayPoolDto } from '../../activation/dto/relay-pool.dto';
import { parsePoolRequest, RelayPoolIssuer } from '../../activation/relay-pools';
import { AppError, FieldError } from '../../common/errors/app-error';
import { LicensesService } from '../../licenses/licenses.service';
import { asFormBody, formText } from '../../html/forms';
import { checkDto } from '../http/check-dto';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { LicensePosted, type LicensePost } from '../http/license-post';
import { setFlash } from '../http/view-locals';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An optional whole number from the form: undefined when blank, the text itself (for the DTO's message) when not a number. */
function formInteger(body: ReturnType<typeof asFormBody>, name: string): number | string | undefined {
  const value = formText(body, name);
  if (value === '') return undefined;
  return /^\d+$/.test(value) ? Number(value) : value;
}

const messageOf = (err: AppError) => {
  const fields = err.details?.fields as FieldError[] | undefined;
  return fields?.length ? fields.map((f) => f.message).join('; ') : err.message;
};

/**
 * The licence page's relay pools (docs/dashboard.md, Relay pools): staff paste a relay's pool request and get its pool
 * file, or end a pool. The admin API's use cases, with the staff member as actor.
 */
@DashboardController('licenses')
export class RelayPoolsPagesController {
  constructor(
    private readonly pools: RelayPoolIssuer,
    private readonly licenses: LicensesService,
  ) {}

  /** Issues the pool and shows its file once (it is not stored: a new request issues a new one). A refusal returns to the licence page. */
  @Post(':id/relay-pools')
  @HttpCode(200)
  async issue(@LicensePosted() { id, req, actor, scope }: LicensePost, @Res() res: Response): Promise<void> {
    const license = await this.licenses.getLicense(id, scope);
    const body = asFormBody(req.body);
    const request = formText(body, 'request');
    try {
      // The request must name this page's licence: a pool is issued from the licence it belongs to.
      if (parsePoolRequest(request).licenseKey !== license.license_key)
        throw AppError.field('request', `This request is for another licence, not ${license.license_key}`);
      const plain: Record<string, unknown> = { request };
      for (const name of ['seats', 'ttl_days']) if (formInteger(body, name) !== undefined) plain[name] = formInteger(body, name);
      const { value, errors } = await checkDto(CreateRelayPoolDto, plain);
      if (!value) throw AppError.validation(errors);
      const issued = await this.pools.issue(value, actor, scope);
      res.render('licenses/relay-pool-issued', { title: 'Relay pool issued', nav: 'licenses', license, issued });
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 400) throw err;
      setFlash(req, 'error', `The relay pool was not issued: ${messageOf(err)}`);
      res.redirect(303, `/licenses/${id}`);
    }
  }

  @Post(':id/relay-pools/:pool_id/end')
  async end(
    @LicensePosted() { id, req, actor, scope }: LicensePost,
    @Param('pool_id') poolId: string,
    @Res() res: Response,
  ): Promise<void> {
    if (!UUID.test(poolId)) throw AppError.notFound('Relay pool');
    try {
      await this.pools.end(id, poolId.toLowerCase(), actor, scope);
      setFlash(req, 'success', "Relay pool ended: its seats are free again here; the relay lends them until the pool's expiry.");
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 409) throw err;
      setFlash(req, 'error', err.message);
    }
    res.redirect(303, `/licenses/${id}`);
  }
}
