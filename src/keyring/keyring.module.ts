import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { SigningService } from '../signing/signing.service';
import { KeyringRepository } from './keyring.repository';
import { KeyringService } from './keyring.service';
import { PublicKeysController } from './public-keys.controller';
import { SigningKeysController } from './signing-keys.controller';

/** Signing keys in PostgreSQL (encrypted at rest), rotation, revocation and the public key endpoints; hands `signing/` the active key. */
@Module({
  imports: [EventsModule],
  controllers: [PublicKeysController, SigningKeysController],
  // One signer per process, so its concurrency limit covers every caller (docs/signing.md, Where the code lives).
  providers: [KeyringRepository, KeyringService, { provide: SigningService, useFactory: () => new SigningService() }],
  exports: [KeyringService, SigningService],
})
export class KeyringModule {}
