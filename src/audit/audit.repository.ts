import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AuditEntry } from './audit-entry.entity';

export type NewAuditEntry = Pick<AuditEntry, 'action' | 'actorType' | 'actor' | 'ip' | 'licenseId' | 'productCode' | 'details'>;

@Injectable()
export class AuditRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(entry: NewAuditEntry, manager: EntityManager = this.dataSource.manager): Promise<void> {
    await manager.insert(AuditEntry, manager.create(AuditEntry, entry));
  }
}
