import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, IsString, Matches } from 'class-validator';
import { MaxChars } from '../../common/validation/validators';

/** A calendar day, `YYYY-MM-DD` (its validity as a date is the service's check). */
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const trimmedUpper = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim().toUpperCase() : value);

/** GET /stats/daily (docs/licences.md, Daily statistics): one product or all of the credential's, UTC days `from`..`to`. */
export class DailyStatsQueryDto {
  @ApiPropertyOptional({ example: 'POS_RETAIL', description: 'product code; absent: every product the credential sees, added up' })
  @IsOptional()
  @Transform(trimmedUpper)
  @IsString()
  @MaxChars(32)
  product?: string;

  @ApiPropertyOptional({ example: '2026-11-01', description: 'first UTC day, included; default: 29 days before `to`' })
  @IsOptional()
  @Matches(DAY, { message: 'from must be a date as YYYY-MM-DD' })
  from?: string;

  @ApiPropertyOptional({ example: '2026-11-30', description: 'last UTC day, included; default: today (UTC)' })
  @IsOptional()
  @Matches(DAY, { message: 'to must be a date as YYYY-MM-DD' })
  to?: string;
}

/** One UTC day of a product's (or the credential's products') client and licence events. */
export class DailyStatsDto {
  @ApiProperty({ example: '2026-11-27', description: 'UTC day, YYYY-MM-DD' }) day: string;
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    example: 14,
    description: 'new seats bound (a re-activation of a bound machine does not count)',
  })
  activations: number;
  @ApiProperty({ type: 'integer', minimum: 0, example: 2, description: 'activations refused (ALREADY_ACTIVATED, KEY_EXPIRED, ...)' })
  refusals: number;
  @ApiProperty({ type: 'integer', minimum: 0, example: 3, description: 'seats a client deactivated itself' }) deactivations: number;
  @ApiProperty({ type: 'integer', minimum: 0, example: 5, description: 'self-service trials started' }) trials: number;
  @ApiProperty({ type: 'integer', minimum: 0, example: 4, description: 'licences created (admin API, dashboard, stores; not trials)' })
  new_licences: number;
}
