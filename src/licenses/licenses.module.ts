import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { EventsModule } from '../events/events.module';
import { JobsModule } from '../jobs/jobs.module';
import { ProductsModule } from '../products/products.module';
import { LicensesController } from './licenses.controller';
import { LicensesRepository } from './licenses.repository';
import { LicensesService } from './licenses.service';
import { SeatSweepService } from './seats/seat-sweep.service';
import { SeatsRepository } from './seats/seats.repository';
import { SeatsService } from './seats/seats.service';
import { RelayPoolsRepository } from './seats/relay-pools.repository';
import { RelayPoolsService } from './seats/relay-pools.service';
import { TrialsRepository } from './trials/trials.repository';
import { TrialsService } from './trials/trials.service';
import { UsageController } from './usage/usage.controller';
import { UsageRepository } from './usage/usage.repository';
import { UsageService } from './usage/usage.service';
import { StoreLicensesService } from './store-licenses/store-licenses.service';
import { CustomerNotesRepository } from './customers/customer-notes.repository';
import { CustomersService } from './customers/customers.service';
import { BulkLicensesService } from './bulk/bulk-licenses.service';
import { BulkOperationsRepository } from './bulk/bulk-operations.repository';
import { ExpiryScanService } from './expiry-scan.service';
import { LicenseCreation } from './license-creation';
import { ChangeLicense } from './use-cases/change-license';
import { CreateLicense } from './use-cases/create-license';
import { ExtendLicense } from './use-cases/extend-license';
import { LicenseWriter } from './use-cases/license-writer';
import { ReleaseSeats } from './use-cases/release-seats';
import { RevokeLicense } from './use-cases/revoke-license';
import { SuspendLicense } from './use-cases/suspend-license';
import { UndoLicenseChange } from './use-cases/undo-license-change';

/** One injectable per verb (docs/architecture.md, Licence use cases): every door calls these. */
const USE_CASES = [CreateLicense, ChangeLicense, ExtendLicense, SuspendLicense, RevokeLicense, ReleaseSeats, UndoLicenseChange];

/** The aggregate's tables: its own services use them, no other module (never exported). */
const REPOSITORIES = [
  LicensesRepository,
  SeatsRepository,
  RelayPoolsRepository,
  UsageRepository,
  TrialsRepository,
  CustomerNotesRepository,
  BulkOperationsRepository,
];

/** What the other modules call besides the use cases. */
const SERVICES = [
  RelayPoolsService,
  LicensesService,
  SeatsService,
  SeatSweepService,
  UsageService,
  TrialsService,
  StoreLicensesService,
  CustomersService,
  BulkLicensesService,
  ExpiryScanService,
];

/** The licence aggregate: licences and their seats. Exports services only, never repositories. */
@Module({
  imports: [AuditModule, EventsModule, ProductsModule, JobsModule],
  controllers: [LicensesController, UsageController],
  providers: [...REPOSITORIES, ...SERVICES, LicenseCreation, LicenseWriter, ...USE_CASES],
  exports: [...SERVICES, ...USE_CASES],
})
export class LicensesModule {}
