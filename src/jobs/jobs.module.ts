import { Module } from '@nestjs/common';
import { JobsService } from './jobs.service';

/** The PostgreSQL job engine (pg-boss): schedules, workers and transactional enqueueing for any module. */
@Module({
  providers: [JobsService],
  exports: [JobsService],
})
export class JobsModule {}
