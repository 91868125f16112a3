import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, Min, ValidateIf } from 'class-validator';
import { IsStorableText, MaxChars } from '../../common/validation/validators';

/** What a bulk operation does to each licence (docs/dashboard.md, Bulk actions). */
export const BULK_ACTIONS = ['renew', 'extend', 'suspend'] as const;
export type BulkAction = (typeof BULK_ACTIONS)[number];

/** The most days one extension adds (ten years). */
export const BULK_EXTEND_MAX_DAYS = 3650;

/** A bulk change as the confirmation form sends it: the action and its parameters, checked like the single actions'. */
export class BulkChangeInput {
  @IsIn(BULK_ACTIONS, { message: `action must be one of ${BULK_ACTIONS.join(', ')}` })
  action: BulkAction;

  /** extend: whole days, 1 to 3650. */
  @ValidateIf((o: BulkChangeInput) => o.action === 'extend')
  @Type(() => Number)
  @IsInt({ message: 'days must be a whole number' })
  @Min(1, { message: 'days must be at least 1' })
  @Max(BULK_EXTEND_MAX_DAYS, { message: `days must be at most ${BULK_EXTEND_MAX_DAYS}` })
  days?: number;

  /** suspend: an optional reason for every audit entry, like the single Suspend's. */
  @IsOptional()
  @IsString()
  @MaxChars(500)
  @IsStorableText()
  reason?: string;
}
