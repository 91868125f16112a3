import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { EventsModule } from '../events/events.module';
import { JobsModule } from '../jobs/jobs.module';
import { ProductsModule } from '../products/products.module';
import { LicensesController } from './licenses.controller';
import { LicensesRepository } from './licenses.repository';
import { LicensesService } from './licenses.service';
import { SeatSweepService } from './seat-sweep.service';
import { SeatsRepository } from './seats.repository';
import { SeatsService } from './seats.service';
import { TrialsRepository } from './trials.repository';
import { TrialsService } from './trials.service';
import { UsageController } from './usage.controller';
import { UsageRepository } from './usage.repository';
import { UsageService } from './usage.service';
import { StoreLicensesService } from './store-licenses.service';
import { CustomerNotesRepository } from './customer-notes.repository';
import { CustomersService } from './customers.service';
import { BulkLicensesService } from './bulk-licenses.service';
import { BulkOperationsRepository } from './bulk-operations.repository';
import { ExpiryScanService } from './expiry-scan.service';

/** The licence aggregate: licences and their seats. Exports services only, never repositories. */
@Module({
  imports: [AuditModule, EventsModule, ProductsModule, JobsModule],
  controllers: [LicensesController, UsageController],
  providers: [
    LicensesRepository,
    SeatsRepository,
    UsageRepository,
    TrialsRepository,
    LicensesService,
    SeatsService,
    SeatSweepService,
    UsageService,
    TrialsService,
    StoreLicensesService,
    CustomerNotesRepository,
    CustomersService,
    BulkOperationsRepository,
    BulkLicensesService,
    ExpiryScanService,
  ],
  exports: [
    BulkLicensesService,
    ExpiryScanService,
    CustomersService,
    LicensesService,
    SeatsService,
    SeatSweepService,
    UsageService,
    TrialsService,
    StoreLicensesService,
  ],
})
export class LicensesModule {}
