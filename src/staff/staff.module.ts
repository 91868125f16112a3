import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { MailModule } from '../mail/mail.module';
import { ProductsModule } from '../products/products.module';
import { FirstUserInitializer } from './first-user';
import { StaffAdminController } from './staff-admin.controller';
import { StaffInvitesRepository } from './staff-invites.repository';
import { StaffSecurityModule } from './staff-security.module';
import { StaffService } from './staff.service';
import { UsersRepository } from './users.repository';
import { UsersService } from './users.service';

/** Staff accounts, roles and invitations (docs/dashboard.md, Staff and roles): the dashboard and the admin API call it. */
@Module({
  imports: [EventsModule, MailModule, ProductsModule, StaffSecurityModule],
  controllers: [StaffAdminController],
  providers: [UsersRepository, StaffInvitesRepository, UsersService, StaffService, FirstUserInitializer],
  exports: [UsersService, StaffService],
})
export class StaffModule {}
