import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { EventsModule } from '../events/events.module';
import { LicensesModule } from '../licenses/licenses.module';
import { KeyringModule } from '../keyring/keyring.module';
import { ActivationController } from './activation.controller';
import { ActivationService } from './activation.service';
import { HeartbeatController } from './heartbeat.controller';
import { OfflineActivationsController } from './offline-activations.controller';
import { RelayPoolIssuer } from './relay-pools';
import { RelayPoolsController } from './relay-pools.controller';

/** Client use cases (activate, deactivate, validate, heartbeat, licence files) and the admin's air-gapped activation, on top of licences, seats and the keyring's active key. */
@Module({
  imports: [EventsModule, LicensesModule, KeyringModule, MetricsModule],
  controllers: [ActivationController, HeartbeatController, OfflineActivationsController, RelayPoolsController],
  providers: [ActivationService, RelayPoolIssuer],
  exports: [ActivationService, RelayPoolIssuer],
})
export class ActivationModule {}
