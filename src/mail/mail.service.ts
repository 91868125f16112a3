import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { DataSource, type EntityManager } from 'typeorm';
import { EventRecorder } from '../audit/event-recorder';
import { type Actor, ALL_PRODUCTS, type ProductScope, productScopeIncludes } from '../common/auth/actor';
import { SecretEnvelope } from '../common/crypto/secret-envelope';
import { AppError } from '../common/errors/app-error';
import { projectRoot } from '../common/paths';
import { APP_CONFIG, AppConfig, type MailKind, portalConfig } from '../config/app-config';
import { JobsService } from '../jobs/jobs.service';
import { EventFanoutService, type EventConsumer } from '../webhooks/event-fanout.service';
import type { PendingEvent } from '../webhooks/event-fanout.service';
import { mailFromEvents, type NewMail, validRecipient } from './mail-derivation';
import { formatMailDate, MailTemplates, type MailView, type RenderedMail } from './mail-templates';
import { MailSendError, MailTransport } from './mail-transport';
import { ClaimedMail, MailRepository, MailRow } from './mail.repository';
import { unsubscribeTokenValid, unsubscribeUrl } from './unsubscribe-token';

/** Wakes a sender after the fan-out wrote mail (`short`: a burst adds one job, not one per message). */
export const MAIL_DRAIN_QUEUE = 'mail-drain';
/** A temporary failure's wake-up at its retry time. */
export const MAIL_RETRY_QUEUE = 'mail-retry';
/** The safety net: a crashed sender's messages once their lease ends, and retries whose wake-up was lost. */
export const MAIL_SWEEP_QUEUE = 'mail-sweep';
/** A claimed message not settled within this is claimed again (one duplicate is possible: docs/mail.md, Retries). */
export const MAIL_LEASE_SECONDS = 120;
const CLAIM_BATCH = 10;
const DRAIN_MS = 60_000;

const REMINDERS: readonly MailKind[] = ['expiring_soon', 'expired'];

/**
 * Customer e-mail (docs/mail.md): the fan-out writes messages to the outbox after commit (consume), the job engine
 * sends them (sendDue) with retries on temporary failures, staff list and retry them.
 */
@Injectable()
export class MailService implements EventConsumer, OnModuleInit, OnModuleDestroy {
  private readonly templates = new MailTemplates(join(projectRoot(), 'views'));
  private readonly transport: MailTransport;
  /** Sign-in links wait in the outbox sealed: staff reading the table cannot sign in as a customer (docs/portal.md, Signing in). */
  private readonly links: SecretEnvelope;

  constructor(
    private readonly repository: MailRepository,
    private readonly jobs: JobsService,
    private readonly fanout: EventFanoutService,
    private readonly events: EventRecorder,
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.transport = new MailTransport(config.mail, join(config.dataDir, 'mail'));
    this.links = new SecretEnvelope(config.sessionSecret, 'portal-sign-in-link');
  }

  /** PUBLIC_URL: the base of every link in a message. */
  get publicUrl(): string {
    return this.config.publicUrl;
  }

  /** Mail is not configured: messages are written as .eml files (the dashboard says so). */
  get writesFiles(): boolean {
    return this.transport.writesFiles;
  }

  onModuleInit(): void {
    this.fanout.addConsumer(this);
    const drain = async () => {
      await this.sendDue();
    };
    // Longer than a drain, so a running drain is never handed to a second worker.
    this.jobs.work(MAIL_DRAIN_QUEUE, drain, { policy: 'short', pollingIntervalSeconds: 0.5, expireInSeconds: 180, retryLimit: 5 });
    this.jobs.work(MAIL_RETRY_QUEUE, drain, { pollingIntervalSeconds: 1, expireInSeconds: 180, retryLimit: 5 });
    this.jobs.schedule(MAIL_SWEEP_QUEUE, '* * * * *', drain, { policy: 'stately' });
  }

  onModuleDestroy(): void {
    this.transport.close();
  }

  /** The fan-out's mail pass, in its transaction: one insert for the batch and one wake-up when any is new. */
  async consume(events: PendingEvent[], manager: EntityManager): Promise<void> {
    const mails = mailFromEvents(events, this.config.mail.disabledKinds);
    if (mails.length === 0) return;
    if ((await this.repository.insertMany(mails, manager)) > 0) await this.jobs.send(MAIL_DRAIN_QUEUE, {}, { manager });
  }

  /** Sends due messages, CLAIM_BATCH at a time, for up to DRAIN_MS; returns how many attempts were made. */
  async sendDue(): Promise<number> {
    const until = Date.now() + DRAIN_MS;
    let attempts = 0;
    while (Date.now() < until) {
      const claimed = await this.repository.claimDue(CLAIM_BATCH, MAIL_LEASE_SECONDS);
      if (claimed.length === 0) break;
      await Promise.all(claimed.map((mail) => this.attempt(mail)));
      attempts += claimed.length;
    }
    return attempts;
  }

  /** The message as it would be sent, for previews (the dashboard's) and for the sender. */
  render(kind: MailKind, toAddress: string, toName: string | null, data: Record<string, unknown>): RenderedMail {
    return this.templates.render(kind, this.view(kind, toAddress, toName, data));
  }

  async list(limit: number, offset: number, products: ProductScope = ALL_PRODUCTS): Promise<{ items: MailRow[]; total: number }> {
    const { rows, total } = await this.repository.list(products, limit, offset);
    return { items: rows, total };
  }

  /**
   * A failed message sent again with a fresh retry schedule, recorded as `mail.retried` in the same transaction
   * (docs/mail.md, Admin API); 404 outside the credential's products, 409 unless failed.
   */
  async retry(id: string, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<MailRow> {
    await this.dataSource.transaction(async (manager) => {
      const mail = await this.repository.get(id, manager);
      if (!mail || (products !== null && (mail.productId === null || !productScopeIncludes(products, mail.productId))))
        throw AppError.notFound('Mail message');
      if (!(await this.repository.reopenFailed(id, manager)))
        throw AppError.conflict(`Only a failed message can be retried; this one is ${mail.status}`, { status: mail.status });
      await this.jobs.send(MAIL_DRAIN_QUEUE, {}, { manager });
      await this.events.record(manager, {
        type: 'mail.retried',
        actor,
        licenseId: mail.licenseId,
        productId: mail.productId,
        productCode: mail.productCode,
        details: { mail_id: Number(mail.id), kind: mail.kind, to: mail.toAddress, last_error: mail.lastError },
      });
    });
    return (await this.repository.get(id)) as MailRow;
  }

  /**
   * "Send the key again" (dashboard): records `license.key_resent` with the licence as it is now; the fan-out derives a
   * new license_issued from it after commit, like every other message (docs/mail.md, When mail is sent). Each call is
   * its own event, so its own message. 409 without a customer e-mail, for an address no server could take, or when
   * license_issued is turned off.
   */
  async resendKey(
    license: {
      id: number;
      product: { code: string; name: string };
      license_key: string;
      customer_email: string | null;
    },
    productId: number,
    actor: Actor,
  ): Promise<string> {
    const address = license.customer_email?.trim();
    if (!address) throw AppError.conflict('The licence has no customer e-mail to send the key to');
    if (this.config.mail.disabledKinds.includes('license_issued'))
      throw AppError.conflict('license_issued mail is turned off (MAIL_DISABLED_KINDS)');
    if (!validRecipient(address)) throw AppError.conflict('The customer e-mail cannot receive mail: invalid recipient address');
    await this.events.record(undefined, {
      type: 'license.key_resent',
      actor,
      licenseId: license.id,
      productId,
      productCode: license.product.code,
      license,
      details: { to: address },
    });
    return address;
  }

  /**
   * Queues a portal sign-in link for `address` in the caller's transaction (docs/portal.md, Signing in): the link
   * itself is sealed in the outbox row. False when the kind is turned off or the address cannot receive mail.
   */
  async queuePortalSignIn(address: string, signInUrl: string, manager: EntityManager): Promise<boolean> {
    if (this.config.mail.disabledKinds.includes('portal_sign_in') || !validRecipient(address)) return false;
    const mail: NewMail = {
      kind: 'portal_sign_in',
      dedupeKey: `portal_sign_in:${randomBytes(12).toString('hex')}`,
      eventId: null,
      licenseId: null,
      productId: null,
      toAddress: address,
      toName: null,
      data: { sealed_sign_in_url: this.links.seal(Buffer.from(signInUrl, 'utf8'), address) },
      status: 'pending',
      lastError: null,
    };
    if ((await this.repository.insertMany([mail], manager)) === 0) return false;
    await this.jobs.send(MAIL_DRAIN_QUEUE, {}, { manager });
    return true;
  }

  /** Records the opt-out when the token is the one mailed to `address`; false otherwise (docs/mail.md, Unsubscribe). */
  async unsubscribe(address: string, token: string): Promise<boolean> {
    if (!validRecipient(address) || !unsubscribeTokenValid(this.config.sessionSecret, address, token)) return false;
    await this.repository.unsubscribe(address);
    return true;
  }

  private async attempt(mail: ClaimedMail): Promise<void> {
    if (mail.unsubscribed) return this.repository.settle(mail.id, { status: 'suppressed', error: 'the address turned reminders off' });
    if (!validRecipient(mail.toAddress))
      return this.repository.settle(mail.id, { status: 'failed', error: 'invalid recipient address: not sent' });
    const rendered = this.render(mail.kind, mail.toAddress, mail.toName, mail.data);
    let failure: MailSendError | undefined;
    try {
      await this.transport.send({
        id: mail.id,
        kind: mail.kind,
        to: { name: mail.toName ?? '', address: mail.toAddress },
        ...rendered,
        ...(REMINDERS.includes(mail.kind) ? { unsubscribeUrl: this.unsubscribeLink(mail.toAddress) } : {}),
      });
    } catch (err) {
      failure = err instanceof MailSendError ? err : new MailSendError((err as Error).message, false);
    }
    if (!failure) return this.repository.settle(mail.id, { status: 'sent' });
    const schedule = this.config.mail.retryScheduleSeconds;
    if (failure.permanent || mail.attempts > schedule.length)
      return this.repository.settle(mail.id, { status: 'failed', error: failure.message });
    const delay = schedule[mail.attempts - 1];
    await this.repository.settle(mail.id, { status: 'pending', error: failure.message, retryInSeconds: delay });
    await this.jobs.send(MAIL_RETRY_QUEUE, {}, { startAfterSeconds: delay });
  }

  /** The sealed link, or a pointer to the portal when it no longer opens (SESSION_SECRET changed): never a broken token. */
  private openLink(sealed: string, address: string): string {
    try {
      return this.links.open(sealed, address).toString('utf8');
    } catch {
      return `${this.config.publicUrl}/portal/login`;
    }
  }

  private unsubscribeLink(address: string): string {
    return unsubscribeUrl(this.config.publicUrl, this.config.sessionSecret, address);
  }

  private view(kind: MailKind, toAddress: string, toName: string | null, data: Record<string, unknown>): MailView {
    const product = (data.product ?? {}) as { name?: string; code?: string };
    return {
      brand: this.config.mail.brandName,
      replyTo: this.config.mail.replyTo,
      customerName: toName ?? '',
      productName: product.name ?? product.code ?? '',
      licenseKey: typeof data.license_key === 'string' ? data.license_key : '',
      expiresAt: formatMailDate(data.expires_at as string | null),
      released: typeof data.released === 'number' ? data.released : undefined,
      heartbeat: data.reason === 'heartbeat_timeout',
      ...(REMINDERS.includes(kind) ? { unsubscribeUrl: this.unsubscribeLink(toAddress) } : {}),
      ...(typeof data.sign_in_url === 'string' ? { signInUrl: data.sign_in_url } : {}),
      ...(typeof data.sealed_sign_in_url === 'string' ? { signInUrl: this.openLink(data.sealed_sign_in_url, toAddress) } : {}),
      ...(kind === 'license_issued' ? this.keyMailLinks(data) : {}),
    };
  }

  /** The portal's address and the store's customer portal, as configured when the message is sent (docs/mail.md, Links in the key mail). */
  private keyMailLinks(data: Record<string, unknown>): Pick<MailView, 'portalUrl' | 'storePortalUrl'> {
    const portal = portalConfig(this.config);
    const store = typeof data.store_name === 'string' ? portal.storePortalUrls[data.store_name] : undefined;
    return {
      ...(portal.enabled ? { portalUrl: `${this.config.publicUrl}/portal` } : {}),
      ...(store ? { storePortalUrl: store } : {}),
    };
  }
}
