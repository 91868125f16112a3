import { Module } from '@nestjs/common';
import { AuditController } from './audit.controller';
import { AuditRepository } from './audit.repository';
import { AuditService } from './audit.service';
import { EventRecorder } from './event-recorder';

@Module({
  controllers: [AuditController],
  providers: [AuditRepository, AuditService, EventRecorder],
  exports: [AuditService, EventRecorder],
})
export class AuditModule {}
