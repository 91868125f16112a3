import { Module } from '@nestjs/common';
import { LicensesModule } from '../licenses/licenses.module';
import { KeyringModule } from '../keyring/keyring.module';
import { ActivationController } from './activation.controller';
import { ActivationService } from './activation.service';

/** Client use cases (activate, deactivate, validate) on top of licences, seats and the keyring's active key. */
@Module({
  imports: [LicensesModule, KeyringModule],
  controllers: [ActivationController],
  providers: [ActivationService],
  exports: [ActivationService],
})
export class ActivationModule {}
