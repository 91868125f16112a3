import { Get, Header, Param, Post, Query, Render, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Actor, CurrentActor } from '../../common/auth/actor';
import { AppError } from '../../common/errors/app-error';
import { MAIL_KINDS, type MailKind } from '../../config/app-config';
import { MailMessageDto } from '../../mail/dto/mail.dto';
import { MailService } from '../../mail/mail.service';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { DashboardIdPipe } from '../http/id-param';
import { setFlash } from '../http/view-locals';
import { pageNumber, pagination } from './pagination';

export const MAIL_PAGE_SIZE = 50;

/** A sample licence for the previews: a non-ASCII name, so the page shows how one renders. */
const SAMPLE = {
  license_key: 'POS-7K3QM-X9D2R-TB4WN-H8C5Z',
  license_type: 'YEARLY',
  product: { code: 'POS_RETAIL', name: 'Retail Point of Sale' },
  released: 1,
  reason: 'heartbeat_timeout',
};

const kindOr404 = (kind: string): MailKind => {
  if (!(MAIL_KINDS as readonly string[]).includes(kind)) throw AppError.notFound('Mail kind');
  return kind as MailKind;
};

/** Customer e-mail (docs/mail.md): recent messages with retry, and a preview of every template. */
@DashboardController('emails')
export class MailPagesController {
  constructor(private readonly mail: MailService) {}

  @Get()
  @Render('emails/list')
  async list(@Query('page') pageQuery: unknown) {
    const page = pageNumber(pageQuery);
    const { items, total } = await this.mail.list(MAIL_PAGE_SIZE, (page - 1) * MAIL_PAGE_SIZE);
    return {
      title: 'E-mail',
      nav: 'emails',
      writesFiles: this.mail.writesFiles,
      kinds: MAIL_KINDS,
      messages: items.map((row) => MailMessageDto.from(row)),
      pagination: pagination('/emails', {}, page, MAIL_PAGE_SIZE, total),
    };
  }

  @Post(':id/retry')
  async retry(
    @Param('id', DashboardIdPipe) id: number,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentActor() actor: Actor,
  ): Promise<void> {
    try {
      const mail = await this.mail.retry(String(id), actor);
      setFlash(req, 'success', `Message ${mail.id} (${mail.kind} to ${mail.toAddress}) queued again.`);
    } catch (err) {
      if (!(err instanceof AppError) || err.status === 404 || err.status >= 500) throw err;
      setFlash(req, 'error', err.message);
    }
    res.redirect(303, '/emails');
  }

  @Get('preview/:kind')
  @Render('emails/preview')
  preview(@Param('kind') kind: string) {
    const rendered = this.sample(kindOr404(kind));
    return { title: `Preview: ${kind}`, nav: 'emails', kind, subject: rendered.subject, text: rendered.text };
  }

  /** The HTML as sent, alone on its page: its own inline styles allowed, nothing else loaded (no script, no remote image). */
  @Get('preview/:kind/html')
  @Header('Content-Type', 'text/html; charset=utf-8')
  previewHtml(@Param('kind') kind: string, @Res() res: Response): void {
    const rendered = this.sample(kindOr404(kind));
    res.setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'");
    res.send(rendered.html);
  }

  private sample(kind: MailKind) {
    const expires = new Date(Date.now() + 7 * 86_400_000).toISOString();
    return this.mail.render(kind, 'customer@example.com', 'Đorđe Petrović', {
      ...SAMPLE,
      expires_at: expires,
      sign_in_url: `${this.mail.publicUrl}/portal/sign-in?token=sample`,
    });
  }
}
