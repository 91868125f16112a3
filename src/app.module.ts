import { DynamicModule, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import { ActivationModule } from './activation/activation.module';
import { AuditModule } from './audit/audit.module';
import { AuthModule } from './auth/auth.module';
import { loggerParams } from './common/http/logging';
import { RateLimitModule } from './common/http/throttling';
import { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { DashboardModule } from './dashboard/dashboard.module';
import { DatabaseModule } from './database/database.module';
import { HealthModule } from './health/health.module';
import { KeyringModule } from './keyring/keyring.module';
import { MetricsModule } from './metrics/metrics.module';
import { RedisModule } from './common/redis/redis.module';
import { LicensesModule } from './licenses/licenses.module';
import { ProductsModule } from './products/products.module';
import { ReleasesModule } from './releases/releases.module';
import { StatsModule } from './stats/stats.module';
import { MailModule } from './mail/mail.module';
import { PortalModule } from './portal/portal.module';
import { StoresModule } from './stores/stores.module';
import { WebhooksModule } from './webhooks/webhooks.module';

@Module({})
export class AppModule {
  /** `logDestination`: where the logs go instead of stdout (tests read them). */
  static forRoot(config: AppConfig, logDestination?: DestinationStream): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggerModule.forRoot(logDestination ? loggerParams(config, logDestination) : loggerParams(config)),
        DatabaseModule,
        RateLimitModule,
        RedisModule,
        MetricsModule,
        // Routes are matched in registration order: the client API, the hot path, first.
        ActivationModule,
        HealthModule,
        AuditModule,
        KeyringModule,
        AuthModule,
        ProductsModule,
        LicensesModule,
        StatsModule,
        WebhooksModule,
        MailModule,
        StoresModule,
        ReleasesModule,
        PortalModule,
        DashboardModule,
      ],
    };
  }
}
