import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { JobsModule } from '../jobs/jobs.module';
import { ProductsModule } from '../products/products.module';
import { StatsController } from './stats.controller';
import { StatsRepository } from './stats.repository';
import { StatsService } from './stats.service';

/** Statistics: reads only. */
@Module({
  imports: [JobsModule, AuditModule, ProductsModule],
  controllers: [StatsController],
  providers: [StatsRepository, StatsService],
  exports: [StatsService],
})
export class StatsModule {}
