import { Controller, Get, Header, HttpCode, Post, Query } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { MailService } from './mail.service';

const page = (title: string, body: string) =>
  `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title></head><body><h1>${title}</h1>${body}</body></html>`;

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

const text = (value: unknown) => (typeof value === 'string' ? value.slice(0, 512) : '');

/**
 * The opt-out link of reminders (docs/mail.md, Unsubscribe). GET only shows a button (link scanners follow links);
 * POST records the opt-out, also as RFC 8058's one-click POST. The token proves the link was mailed to the address.
 */
@ApiExcludeController()
@Controller('mail/unsubscribe')
export class UnsubscribeController {
  constructor(private readonly mail: MailService) {}

  @Get()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  confirm(@Query('address') address: unknown, @Query('token') token: unknown): string {
    const query = new URLSearchParams({ address: text(address), token: text(token) }).toString();
    return page(
      'Stop expiry reminders',
      `<p>Stop licence expiry reminders to ${escapeHtml(text(address))}?</p>` +
        `<form method="post" action="/mail/unsubscribe?${escapeHtml(query)}"><button type="submit">Stop reminders</button></form>`,
    );
  }

  @Post()
  @HttpCode(200)
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  async unsubscribe(@Query('address') address: unknown, @Query('token') token: unknown): Promise<string> {
    const done = await this.mail.unsubscribe(text(address), text(token));
    return done
      ? page('Reminders stopped', '<p>This address gets no more licence expiry reminders.</p>')
      : page('Link not valid', '<p>This link is incomplete or was not issued for this address.</p>');
  }
}
