import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { SYSTEM_ACTOR } from '../common/auth/actor';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { type DomainEvent, EventRecorder } from '../events/event-recorder';
import { JobsService } from '../jobs/jobs.service';
import { LicensesRepository } from './licenses.repository';
import { LicensesService } from './licenses.service';

export const EXPIRY_SCAN_QUEUE = 'licenses.expiry-scan';
/** Notices claimed per transaction: a backlog is worked off in short transactions. */
const EXPIRY_BATCH = 500;

/**
 * `license.expiring_soon` and `license.expired` (docs/webhooks.md, Event catalogue): every minute, each once per licence
 * and expiry date (the notice row's key), recorded like any change, an audit entry and an event with the licence as GET
 * shows it then, with the claim of its notice in one transaction. Webhooks and mail hear of them from the spine.
 */
@Injectable()
export class ExpiryScanService implements OnModuleInit {
  constructor(
    private readonly repository: LicensesRepository,
    private readonly licenses: LicensesService,
    private readonly events: EventRecorder,
    private readonly jobs: JobsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.jobs.schedule(
      EXPIRY_SCAN_QUEUE,
      '* * * * *',
      async () => {
        await this.scanExpiries();
      },
      { policy: 'stately' },
    );
  }

  /** Tells every due notice; returns how many were claimed. */
  async scanExpiries(): Promise<number> {
    let total = 0;
    for (;;) {
      const claimed = await this.events.transaction(async (manager) => {
        const notices = await this.repository.claimExpiryNotices(this.config.webhooks.expiringDays, EXPIRY_BATCH, manager);
        const events: DomainEvent[] = [];
        for (const notice of notices) {
          const subject = await this.licenses.eventSubjectIn(notice.licenseId, manager);
          if (!subject) continue;
          events.push({
            type: notice.kind === 'expired' ? 'license.expired' : 'license.expiring_soon',
            actor: SYSTEM_ACTOR,
            licenseId: notice.licenseId,
            productId: subject.productId,
            productCode: subject.license.product_code,
            license: subject.license,
          });
        }
        if (events.length) await this.events.record(manager, ...events);
        return notices.length;
      });
      total += claimed;
      if (claimed < EXPIRY_BATCH) return total;
    }
  }
}
