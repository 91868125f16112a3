import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { LicensesModule } from '../licenses/licenses.module';
import { SigningModule } from '../signing/signing.module';
import { ActivationController } from './activation.controller';
import { ActivationService } from './activation.service';
import { OfflineActivationsController } from './offline-activations.controller';

/** Client use cases (activate, deactivate, validate, licence files) and the admin's air-gapped activation, on top of licences, seats and signing. */
@Module({
  imports: [AuditModule, LicensesModule, SigningModule],
  controllers: [ActivationController, OfflineActivationsController],
  providers: [ActivationService],
  exports: [ActivationService],
})
export class ActivationModule {}
