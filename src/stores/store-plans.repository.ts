import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { StoreName } from '../licenses/store-licenses/store-names';
import { StorePlan } from './store-plan.entity';

/**
 * The store plans (store_plans): plain rows read and written by key, each with its product. Style: repository API
 * (docs/architecture.md, Database style). Each method takes the caller's transaction when it has one.
 */
@Injectable()
export class StorePlansRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private plans(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(StorePlan);
  }

  insertPlan(plan: Partial<StorePlan>, manager?: EntityManager): Promise<StorePlan> {
    return this.plans(manager).save(this.plans(manager).create(plan));
  }

  savePlan(plan: StorePlan, manager?: EntityManager): Promise<StorePlan> {
    return this.plans(manager).save(plan);
  }

  getPlan(id: number, manager?: EntityManager): Promise<StorePlan | null> {
    return this.plans(manager).findOne({ where: { id }, relations: { product: true } });
  }

  /** The plan, locked for the rest of the transaction (an update or delete and its audit entry), with its product. */
  async lockPlan(id: number, manager: EntityManager): Promise<StorePlan | null> {
    const locked = await this.plans(manager).findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
    return locked ? this.getPlan(id, manager) : null;
  }

  planForPrice(store: StoreName, priceId: string, manager?: EntityManager): Promise<StorePlan | null> {
    return this.plans(manager).findOne({ where: { store, priceId }, relations: { product: true } });
  }

  listPlans(): Promise<StorePlan[]> {
    return this.plans().find({ relations: { product: true }, order: { id: 'ASC' } });
  }

  async deletePlan(id: number, manager?: EntityManager): Promise<boolean> {
    return ((await this.plans(manager).delete({ id })).affected ?? 0) > 0;
  }
}
