import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { ProductsModule } from '../products/products.module';
import { LicensesController } from './licenses.controller';
import { LicensesRepository } from './licenses.repository';
import { LicensesService } from './licenses.service';
import { SeatsRepository } from './seats.repository';
import { SeatsService } from './seats.service';

/** The licence aggregate: licences and their seats. Exports services only, never repositories. */
@Module({
  imports: [AuditModule, ProductsModule],
  controllers: [LicensesController],
  providers: [LicensesRepository, SeatsRepository, LicensesService, SeatsService],
  exports: [LicensesService, SeatsService],
})
export class LicensesModule {}
