import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { JobsModule } from '../jobs/jobs.module';
import { ProductsModule } from '../products/products.module';
import { LicensesController } from './licenses.controller';
import { LicensesRepository } from './licenses.repository';
import { LicensesService } from './licenses.service';
import { SeatSweepService } from './seat-sweep.service';
import { SeatsRepository } from './seats.repository';
import { SeatsService } from './seats.service';
import { StoreLicensesService } from './store-licenses.service';

/** The licence aggregate: licences and their seats. Exports services only, never repositories. */
@Module({
  imports: [AuditModule, ProductsModule, JobsModule],
  controllers: [LicensesController],
  providers: [LicensesRepository, SeatsRepository, LicensesService, SeatsService, SeatSweepService, StoreLicensesService],
  exports: [LicensesService, SeatsService, SeatSweepService, StoreLicensesService],
})
export class LicensesModule {}
