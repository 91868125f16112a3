import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Product } from './product.entity';

@Injectable()
export class ProductsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private repo(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(Product);
  }

  listAll(): Promise<Product[]> {
    return this.repo().find({ order: { id: 'ASC' } });
  }

  getById(id: number, manager?: EntityManager): Promise<Product | null> {
    return this.repo(manager).findOneBy({ id });
  }

  getByCode(code: string, manager?: EntityManager): Promise<Product | null> {
    return this.repo(manager).findOneBy({ code });
  }

  lockById(id: number, manager: EntityManager): Promise<Product | null> {
    return this.repo(manager).findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  insert(product: Partial<Product>, manager: EntityManager): Promise<Product> {
    return this.repo(manager).save(this.repo(manager).create(product));
  }

  save(product: Product, manager: EntityManager): Promise<Product> {
    return this.repo(manager).save(product);
  }
}
