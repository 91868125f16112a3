import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createTransport, type SendMailOptions, type Transporter } from 'nodemailer';
import type { MailConfig } from '../config/app-config';

/** A rendered message; every header value goes through nodemailer's address and header APIs (docs/mail.md, Headers). */
export interface OutgoingMail {
  id: string;
  kind: string;
  to: { name: string; address: string };
  subject: string;
  text: string;
  html: string;
  /** Reminders only: the one-click opt-out link (List-Unsubscribe and List-Unsubscribe-Post). */
  unsubscribeUrl?: string;
}

/** An attempt that did not hand the message over; `permanent` ones are not retried (SMTP 5xx). */
export class MailSendError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

/** SMTP 5xx is permanent; 4xx, dropped connections and timeouts are temporary (docs/mail.md, Retries). */
export function classifySendError(err: unknown): MailSendError {
  const e = err as { message?: string; responseCode?: number; code?: string };
  const message = (e.message ?? String(err)).replace(/\s+/g, ' ').slice(0, 500);
  if (typeof e.responseCode === 'number') return new MailSendError(message, e.responseCode >= 500);
  // A message nodemailer refuses to build (no valid recipient) fails the same way on every attempt.
  if (e.code === 'EENVELOPE') return new MailSendError(message, true);
  return new MailSendError(message, false);
}

/** Newlines and other control characters never reach a display name, whatever nodemailer would do with them. */
export const displayName = (name: string) =>
  name
    .replace(/\p{Cc}+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 200);

/**
 * The only user of nodemailer (docs/mail.md): SMTP_URL's server, or without it `.eml` files under DATA_DIR/mail/ (the
 * message exactly as it would have been sent).
 */
export class MailTransport {
  private readonly transporter: Transporter;

  constructor(
    private readonly config: MailConfig,
    private readonly fileDir: string,
  ) {
    this.transporter = config.smtpUrl
      ? createTransport({ url: config.smtpUrl, connectionTimeout: 15_000, greetingTimeout: 15_000, socketTimeout: 30_000 })
      : createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  }

  get writesFiles(): boolean {
    return !this.config.smtpUrl;
  }

  /** Hands the message over; throws a MailSendError. */
  async send(mail: OutgoingMail): Promise<void> {
    let info: { message?: unknown };
    try {
      info = await this.transporter.sendMail(this.options(mail));
    } catch (err) {
      throw classifySendError(err);
    }
    if (this.writesFiles) {
      try {
        await mkdir(this.fileDir, { recursive: true });
        await writeFile(join(this.fileDir, `${mail.id.padStart(8, '0')}-${mail.kind}.eml`), info.message as Buffer);
      } catch (err) {
        throw new MailSendError(`cannot write the .eml file: ${(err as Error).message}`, false);
      }
    }
  }

  close(): void {
    this.transporter.close();
  }

  private options(mail: OutgoingMail): SendMailOptions {
    return {
      from: { name: displayName(this.config.brandName), address: this.config.from },
      to: { name: displayName(mail.to.name), address: mail.to.address },
      ...(this.config.replyTo ? { replyTo: this.config.replyTo } : {}),
      subject: mail.subject.replace(/\s+/g, ' ').trim(),
      text: mail.text,
      html: mail.html,
      // A value from data can never make nodemailer read a file or fetch a URL into the message.
      disableFileAccess: true,
      disableUrlAccess: true,
      ...(mail.unsubscribeUrl
        ? {
            list: { unsubscribe: { url: mail.unsubscribeUrl, comment: 'Stop expiry reminders' } },
            headers: { 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
          }
        : {}),
    };
  }
}
