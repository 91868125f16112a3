import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminRoute } from '../common/auth/admin-route.decorator';
import { StaffAccountDto } from './dto/staff-account.dto';
import { StaffService } from './staff.service';

@ApiTags('admin: staff')
@AdminRoute('staff:read')
@Controller('api/v1/admin/staff')
export class StaffAdminController {
  constructor(private readonly staff: StaffService) {}

  @Get()
  @ApiOperation({
    summary: 'List the staff accounts (never a password or second-factor secret)',
    description: 'Needs staff:read for every product: a token limited to products is refused (403). Ordered by username.',
  })
  @ApiOkResponse({ type: [StaffAccountDto] })
  async list(): Promise<StaffAccountDto[]> {
    return (await this.staff.listAccounts()).map((a) => StaffAccountDto.from(a));
  }
}
