import { Module } from '@nestjs/common';
import { LicensesModule } from '../licenses/licenses.module';
import { KeyringModule } from '../keyring/keyring.module';
import { ActivationController } from './activation.controller';
import { ActivationService } from './activation.service';
import { HeartbeatController } from './heartbeat.controller';

/** Client use cases (activate, deactivate, validate, heartbeat) on top of licences, seats and the keyring's active key. */
@Module({
  imports: [LicensesModule, KeyringModule],
  controllers: [ActivationController, HeartbeatController],
  providers: [ActivationService],
  exports: [ActivationService],
})
export class ActivationModule {}
