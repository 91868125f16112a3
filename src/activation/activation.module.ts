import { Module } from '@nestjs/common';
import { LicensesModule } from '../licenses/licenses.module';
import { SigningModule } from '../signing/signing.module';
import { ActivationController } from './activation.controller';
import { ActivationService } from './activation.service';

/** Client use cases (activate, deactivate, validate) on top of licences, seats and signing. */
@Module({
  imports: [LicensesModule, SigningModule],
  controllers: [ActivationController],
  providers: [ActivationService],
  exports: [ActivationService],
})
export class ActivationModule {}
