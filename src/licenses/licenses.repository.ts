import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { License } from './license.entity';

/** Narrow, named queries on licences; every method takes the caller's transaction when it has one. */
@Injectable()
export class LicensesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private repo(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(License);
  }

  getById(id: number, manager?: EntityManager): Promise<License | null> {
    return this.repo(manager).findOne({ where: { id }, relations: { product: true } });
  }

  getByKey(licenseKey: string, manager?: EntityManager): Promise<License | null> {
    return this.repo(manager).findOne({ where: { licenseKey }, relations: { product: true } });
  }

  /** SELECT ... FOR UPDATE on the licence row (product loaded separately: outer joins cannot be locked). */
  async lockById(id: number, manager: EntityManager): Promise<License | null> {
    const license = await this.repo(manager).findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
    return license ? this.withProduct(license, manager) : null;
  }

  /** Serialises every seat change of one licence: the basis of race-free seat counting. */
  async lockByKey(licenseKey: string, manager: EntityManager): Promise<License | null> {
    const license = await this.repo(manager).findOne({ where: { licenseKey }, lock: { mode: 'pessimistic_write' } });
    return license ? this.withProduct(license, manager) : null;
  }

  insert(license: Partial<License>, manager: EntityManager): Promise<License> {
    return this.repo(manager).save(this.repo(manager).create(license));
  }

  save(license: License, manager: EntityManager): Promise<License> {
    return this.repo(manager).save(license);
  }

  private async withProduct(license: License, manager: EntityManager): Promise<License> {
    const withProduct = await this.repo(manager).findOne({ where: { id: license.id }, relations: { product: true } });
    return withProduct ?? license;
  }
}
