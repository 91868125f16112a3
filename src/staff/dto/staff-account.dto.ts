import { ApiProperty } from '@nestjs/swagger';
import { STAFF_ROLES, type StaffRole } from '../roles';
import type { StaffAccount } from '../staff.service';
import { apiFields, apiObject, apiTimes } from '../../common/http/api-fields';

/** GET /api/v1/admin/staff (docs/admin-api.md, Staff accounts): an account without its password or second factors' secrets. */
export class StaffAccountDto {
  @ApiProperty() id: number;
  @ApiProperty({ example: 'ana' }) username: string;
  @ApiProperty({ type: String, nullable: true, example: 'ana@example.com' }) email: string | null;
  @ApiProperty({ enum: STAFF_ROLES, example: 'support' }) role: StaffRole;
  @ApiProperty({
    type: [String],
    nullable: true,
    example: ['POS_RETAIL'],
    description: 'product codes the account is limited to; null: every product',
  })
  products: string[] | null;
  @ApiProperty({ type: [String], example: ['totp'], description: 'the kinds of second factor enrolled: totp, passkey' })
  second_factors: string[];
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) last_sign_in_at: string | null;
  @ApiProperty() disabled: boolean;

  static from(a: StaffAccount): StaffAccountDto {
    return apiObject(
      apiFields(a, 'id', 'username', 'email', 'role', 'products', 'secondFactors'),
      apiTimes(a, 'lastSignInAt'),
      apiFields(a, 'disabled'),
    );
  }
}
