import { Module } from '@nestjs/common';
import { JobsModule } from '../jobs/jobs.module';
import { StatsController } from './stats.controller';
import { StatsRepository } from './stats.repository';
import { StatsService } from './stats.service';

/** Statistics: reads only. */
@Module({
  imports: [JobsModule],
  controllers: [StatsController],
  providers: [StatsRepository, StatsService],
  exports: [StatsService],
})
export class StatsModule {}
