import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash, randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { toError } from '../common/errors/to-error';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { LicensesService } from '../licenses/licenses.service';
import { MailService } from '../mail/mail.service';
import { EventRecorder } from '../events/event-recorder';
import { customerActor } from './portal-http';
import { PortalLoginLimiter } from './portal-login-limiter';
import { PortalSignInRepository } from './portal-sign-in.repository';

/** A link works this long after it was asked for. */
export const SIGN_IN_LINK_TTL_SECONDS = 15 * 60;
/** 32 random bytes, base64url: what a link's token looks like; anything else is not looked up. */
const TOKEN_FORMAT = /^[A-Za-z0-9_-]{43}$/;

const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/** An address as the portal compares it: trimmed and lower-cased (docs/portal.md, Isolation). */
export const normaliseEmail = (email: string) => email.trim().toLowerCase();

/** One mailbox, at most 254 characters, nothing a mail header could be built from (docs/portal.md, Signing in). */
export const EMAIL_FORMAT = /^[^\s\p{Cc}<>()[\]\\,;:"@]+@[^\s\p{Cc}<>()[\]\\,;:"@]+\.[^\s\p{Cc}<>()[\]\\,;:"@.]+$/u;

/**
 * Sign-in by e-mail link (docs/portal.md, Signing in): the same answer whether the address is known or not, links
 * stored as hashes, used once by the POST of the page a link opens, and only while a licence still carries the address.
 */
@Injectable()
export class PortalSignInService implements OnApplicationShutdown {
  private readonly logger = new Logger('Portal');
  /** Link requests still writing: the answer never waits for them (its timing tells nothing), shutdown does. */
  private readonly pending = new Set<Promise<void>>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly links: PortalSignInRepository,
    private readonly licenses: LicensesService,
    private readonly mail: MailService,
    private readonly limiter: PortalLoginLimiter,
    private readonly events: EventRecorder,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Counts the request against both limits and, within them, mails a link when a licence carries the address. Resolves
   * before the lookup and the mail are done, the same way for every address.
   */
  async requestLink(req: { ip?: string }, email: string): Promise<void> {
    if (!(await this.limiter.allow(req, email))) return;
    const work = this.sendLinkIfKnown(email).catch((err: unknown) => this.logger.error(`sign-in link not sent: ${toError(err).message}`));
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }

  /** What the GET of a link shows: a "Sign in" button when it would work, else a way to ask for a new one. Uses nothing. */
  async linkUsable(token: string): Promise<boolean> {
    return TOKEN_FORMAT.test(token) && (await this.links.state(hashToken(token))).usable;
  }

  /**
   * Uses the link: the address to sign in as, or null (unknown, altered, used, expired, or no licence carries the
   * address now). A sign-in is recorded as `auth.login` by the customer with the link's use, so staff see customers'
   * sign-ins in the audit log beside their own.
   */
  async signIn(req: { ip?: string }, token: string): Promise<string | null> {
    if (!TOKEN_FORMAT.test(token)) return null;
    return this.dataSource.transaction(async (manager) => {
      const email = await this.links.consume(hashToken(token), manager);
      if (email === null || !(await this.licenses.hasCustomerEmail(email))) return null;
      await this.events.record(manager, { type: 'auth.login', actor: customerActor(req, email), details: { portal: true } });
      return email;
    });
  }

  /** The end of a portal session, recorded as `auth.logout` by the customer. */
  async signOut(req: { ip?: string }, email: string): Promise<void> {
    await this.events.record(undefined, { type: 'auth.logout', actor: customerActor(req, email), details: { portal: true } });
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.pending);
  }

  private async sendLinkIfKnown(email: string): Promise<void> {
    if (!(await this.licenses.hasCustomerEmail(email))) return;
    const token = randomBytes(32).toString('base64url');
    const url = `${this.config.publicUrl}/portal/sign-in?token=${token}`;
    await this.dataSource.transaction(async (manager) => {
      await this.links.insert(hashToken(token), email, SIGN_IN_LINK_TTL_SECONDS, manager);
      await this.mail.queuePortalSignIn(email, url, manager);
    });
  }
}
