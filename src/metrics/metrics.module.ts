import { Global, MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { RATE_LIMIT_OBSERVER } from '../common/http/throttling';
import { MetricsController } from './metrics.controller';
import { MetricsMiddleware } from './metrics.middleware';
import { MetricsService } from './metrics.service';

@Global()
@Module({
  controllers: [MetricsController],
  // The rate-limit guard in common/ reports rejections through its token; this module provides it.
  providers: [MetricsService, { provide: RATE_LIMIT_OBSERVER, useExisting: MetricsService }],
  exports: [MetricsService, RATE_LIMIT_OBSERVER],
})
export class MetricsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(MetricsMiddleware).forRoutes('*');
  }
}
