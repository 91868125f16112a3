import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import hbs from 'hbs';
import { MAIL_KINDS, type MailKind } from '../config/app-config';

type Template = (context: object) => string;

/** What every template may use (docs/mail.md, Kinds); absent values render as empty text. */
export interface MailView {
  brand: string;
  replyTo?: string;
  customerName: string;
  productName: string;
  licenseKey: string;
  /** Already formatted for people (UTC), or null: never expires. */
  expiresAt: string | null;
  released?: number;
  heartbeat?: boolean;
  unsubscribeUrl?: string;
  signInUrl?: string;
  /** The customer portal's address (PUBLIC_URL/portal, no token), when the portal is on. */
  portalUrl?: string;
  /** The store's own customer portal (invoices, payment method, cancelling), for a licence that store made. */
  storePortalUrl?: string;
}

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

const SUBJECTS: Record<MailKind, (v: MailView) => string> = {
  license_issued: (v) => `Your licence key for ${v.productName}`,
  expiring_soon: (v) => `Your ${v.productName} licence expires on ${v.expiresAt ?? ''}`,
  expired: (v) => `Your ${v.productName} licence has expired`,
  seat_released: (v) => `A seat of your ${v.productName} licence was released`,
  portal_sign_in: (v) => `Sign in to ${v.brand}`,
};

/** A UTC date people read the same in every client: "31 January 2027, 10:00 UTC". */
export function formatMailDate(iso: string | null | undefined): string | null {
  if (!iso) return null;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return null;
  const date = d.toLocaleDateString('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
  return `${date}, ${d.toISOString().slice(11, 16)} UTC`;
}

/**
 * The templates under views/mail/ (docs/mail.md, Kinds): `<kind>.text.hbs` (not escaped: plain text) and
 * `<kind>.html.hbs` (escaped) inside layout.html.hbs, compiled once on a Handlebars instance of their own.
 */
export class MailTemplates {
  private readonly text = new Map<MailKind, Template>();
  private readonly html = new Map<MailKind, Template>();
  private readonly layout: Template;

  constructor(viewsDir: string) {
    const { handlebars } = hbs.create();
    const dir = join(viewsDir, 'mail');
    const read = (file: string) => readFileSync(join(dir, file), 'utf8');
    this.layout = handlebars.compile(read('layout.html.hbs'));
    for (const kind of MAIL_KINDS) {
      this.text.set(kind, handlebars.compile(read(`${kind}.text.hbs`), { noEscape: true }));
      this.html.set(kind, handlebars.compile(read(`${kind}.html.hbs`)));
    }
  }

  render(kind: MailKind, view: MailView): RenderedMail {
    const subject = SUBJECTS[kind](view);
    const body = (this.html.get(kind) as Template)(view);
    return {
      subject,
      text: (this.text.get(kind) as Template)(view),
      html: this.layout({ ...view, subject, body }),
    };
  }
}
