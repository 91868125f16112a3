import { Module } from '@nestjs/common';
import { SigningService } from './signing.service';

/** Pure signing (no database, no key storage): the keyring hands it the active key. */
@Module({
  providers: [SigningService],
  exports: [SigningService],
})
export class SigningModule {}
