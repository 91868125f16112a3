import { Module } from '@nestjs/common';
import { join } from 'node:path';
import { ActivationModule } from '../activation/activation.module';
import { EventsModule } from '../events/events.module';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { LicensesModule } from '../licenses/licenses.module';
import { ProductsModule } from '../products/products.module';
import { FilesystemReleaseStorage } from './filesystem-storage';
import { ReleaseClientController } from './release-client.controller';
import { RELEASE_STORAGE, type ReleaseStorage } from './release-storage';
import { ReleaseUpdatesService } from './release-updates.service';
import { ReleasesController } from './releases.controller';
import { ReleaseDownloadsRepository } from './release-downloads.repository';
import { ReleasesRepository } from './releases.repository';
import { ReleasesService } from './releases.service';
import { S3ReleaseStorage } from './s3-storage';

/** The one storage of the deployment (docs/releases.md, Storage): S3 when RELEASES_S3_BUCKET is set, else DATA_DIR/releases. */
export function releaseStorageFor(config: AppConfig): ReleaseStorage {
  const s3 = config.releases?.s3;
  return s3 ? new S3ReleaseStorage(s3) : new FilesystemReleaseStorage(join(config.dataDir, 'releases'));
}

const releaseStorage = { provide: RELEASE_STORAGE, inject: [APP_CONFIG], useFactory: releaseStorageFor };

/** Releases, their artifacts and downloads (docs/releases.md), on top of products, licences and the signed answers. */
@Module({
  imports: [EventsModule, ProductsModule, LicensesModule, ActivationModule],
  controllers: [ReleaseClientController, ReleasesController],
  providers: [ReleasesRepository, ReleaseDownloadsRepository, ReleasesService, ReleaseUpdatesService, releaseStorage],
  exports: [ReleasesService, ReleaseUpdatesService],
})
export class ReleasesModule {}
