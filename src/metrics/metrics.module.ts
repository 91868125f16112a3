import { Global, Module } from '@nestjs/common';
import { RATE_LIMIT_OBSERVER } from '../common/http/throttling';
import { MetricsController } from './metrics.controller';
import { MetricsService } from './metrics.service';

/**
 * Request timings are observed by configureApp's front middleware (requestMetrics), not by a Nest middleware.
 * Global only for RATE_LIMIT_OBSERVER, which common's rate-limit guard needs in every module; features that
 * count something import this module explicitly (docs/architecture.md, Module boundaries).
 */
@Global()
@Module({
  controllers: [MetricsController],
  // The rate-limit guard in common/ reports rejections through its token; this module provides it.
  providers: [MetricsService, { provide: RATE_LIMIT_OBSERVER, useExisting: MetricsService }],
  exports: [MetricsService, RATE_LIMIT_OBSERVER],
})
export class MetricsModule {}
