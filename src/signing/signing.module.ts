import { Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { loadOrCreateSigningKey } from './signing-key';
import { PublicKeyController } from './public-key.controller';
import { SIGNING_KEY, SigningService } from './signing.service';

@Module({
  controllers: [PublicKeyController],
  providers: [
    { provide: SIGNING_KEY, inject: [APP_CONFIG], useFactory: (config: AppConfig) => loadOrCreateSigningKey(config.signingKeyFile) },
    SigningService,
  ],
  exports: [SigningService],
})
export class SigningModule {}
