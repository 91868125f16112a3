import { ApiProperty } from '@nestjs/swagger';

/** A licence's uses this period (docs/licences.md, Usage metering): every field null when the licence is not metered. */
export class UsageAnswerDto {
  @ApiProperty({ type: 'integer', nullable: true, example: 42, description: 'uses counted this period' })
  uses: number | null;
  @ApiProperty({ type: 'integer', nullable: true, example: 500, description: "the policy's max_uses" })
  max_uses: number | null;
  @ApiProperty({ type: 'integer', nullable: true, example: 458 })
  remaining: number | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'start of the UTC month, or the licence\'s created_at for uses_period "none"',
  })
  period_start: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'start of the next UTC month; null for uses_period "none"',
  })
  period_end: string | null;
}

/** One past period's count. */
export class UsagePeriodDto {
  @ApiProperty({ type: String, format: 'date-time' }) period_start: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) period_end: string | null;
  @ApiProperty({ type: 'integer', example: 500 }) uses: number;
}

/** The admin's view of a licence's usage: this period and every past one, newest first. */
export class UsageReportDto extends UsageAnswerDto {
  @ApiProperty({ enum: ['none', 'month'], example: 'month' }) uses_period: 'none' | 'month';
  @ApiProperty({ type: [UsagePeriodDto] }) history: UsagePeriodDto[];
}
