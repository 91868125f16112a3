import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { Actor } from '../common/auth/actor';
import type { AuditAction } from './audit-entry.entity';
import { AuditRepository } from './audit.repository';

export interface AuditEvent {
  action: AuditAction;
  actor: Actor;
  licenseId?: number | null;
  productCode?: string | null;
  details?: Record<string, unknown>;
}

/** The audit log: a leaf every module may use. Pass the transaction's manager so the entry commits with the change. */
@Injectable()
export class AuditService {
  constructor(private readonly audit: AuditRepository) {}

  async record(event: AuditEvent, manager?: EntityManager): Promise<void> {
    await this.audit.insert(
      {
        action: event.action,
        actorType: event.actor.type,
        actor: event.actor.name?.slice(0, 200) ?? null,
        ip: event.actor.ip?.slice(0, 45) ?? null,
        licenseId: event.licenseId ?? null,
        productCode: event.productCode ?? null,
        details: event.details ?? {},
      },
      manager,
    );
  }
}
