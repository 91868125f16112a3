import { Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { IsString, Matches } from 'class-validator';
import { Actor, authorName, CurrentActor } from '../../common/auth/actor';
import { AppError } from '../../common/errors/app-error';
import { IsStorableText, MaxChars, MinChars } from '../../common/validation/validators';
import { SavedViewsService } from '../saved-views.service';
import { checkDto } from '../http/check-dto';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { asFormBody, formText } from '../../html/forms';
import { DashboardIdPipe } from '../http/id-param';
import { setFlash } from '../http/view-locals';
import { LIST_VIEW_FIELDS, viewQuery } from './license-list';

/** The most saved views; the list shows them all. */
export const SAVED_VIEWS_MAX = 50;
/** The longest value one field of a view keeps (the list's own longest filter is the 200-character search). */
const VIEW_VALUE_MAX = 200;

class SavedViewName {
  @IsString()
  @MinChars(1, { message: 'Give the view a name' })
  @MaxChars(80, { message: 'A view name has at most 80 characters' })
  @IsStorableText()
  @Matches(/^\P{Cc}*$/u, { message: 'A view name cannot hold control characters' })
  name: string;
}

/**
 * Saved views of the licence list (docs/dashboard.md, Saved views): the list's filters, sort and page size under a name,
 * shared by every staff member and listed above the list. Saving a name again replaces its view.
 */
@DashboardController('licenses/views')
export class SavedViewsController {
  constructor(private readonly views: SavedViewsService) {}

  @Post()
  async save(@Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor): Promise<void> {
    const body = asFormBody(req.body);
    const params = new URLSearchParams();
    for (const field of LIST_VIEW_FIELDS) {
      const value = formText(body, field);
      if (value.length > VIEW_VALUE_MAX) throw AppError.field(field, `${field} is longer than ${VIEW_VALUE_MAX} characters`);
      if (value) params.set(field, value);
    }
    const view = `/licenses${params.size ? `?${params.toString()}` : ''}`;
    const { value, errors } = await checkDto(SavedViewName, { name: formText(body, 'name') });
    if (!value) {
      setFlash(req, 'error', `The view was not saved: ${errors.map((e) => e.message).join('; ')}.`);
      return res.redirect(303, view);
    }
    if (!params.size) {
      setFlash(req, 'error', 'The view was not saved: filter, sort or size the list first.');
      return res.redirect(303, view);
    }
    const saved = await this.views.save(value.name, viewQuery(params), authorName(actor), SAVED_VIEWS_MAX);
    setFlash(
      req,
      saved === null ? 'error' : 'success',
      saved === null
        ? `The view was not saved: there are already ${SAVED_VIEWS_MAX} views; delete one first.`
        : `View “${value.name}” saved.`,
    );
    res.redirect(303, view);
  }

  @Post(':id/delete')
  async delete(@Param('id', DashboardIdPipe) id: number, @Req() req: Request, @Res() res: Response): Promise<void> {
    if (!(await this.views.delete(id))) throw AppError.notFound('View');
    setFlash(req, 'success', 'View deleted.');
    res.redirect(303, '/licenses');
  }
}
