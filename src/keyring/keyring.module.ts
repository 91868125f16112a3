import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { SigningModule } from '../signing/signing.module';
import { KeyringRepository } from './keyring.repository';
import { KeyringService } from './keyring.service';
import { PublicKeysController } from './public-keys.controller';
import { SigningKeysController } from './signing-keys.controller';

/** Signing keys in PostgreSQL (encrypted at rest), rotation, revocation and the public key endpoints; hands `signing/` the active key. */
@Module({
  imports: [AuditModule, SigningModule],
  controllers: [PublicKeysController, SigningKeysController],
  providers: [KeyringRepository, KeyringService],
  exports: [KeyringService, SigningModule],
})
export class KeyringModule {}
