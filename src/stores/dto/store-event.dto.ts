import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { PageQueryDto, toQueryInteger } from '../../common/http/page-query.dto';
import {
  STORE_EVENT_REASON_CODES,
  STORE_EVENT_STATUSES,
  STORE_NAMES,
  type StoreEventReasonCode,
  type StoreEventStatus,
  type StoreName,
} from '../../licenses/store-licenses/store-names';
import type { StoreEvent } from '../store-event.entity';
import { apiFields, apiObject, apiTimes } from '../../common/http/api-fields';

/** GET /admin/store-events filters, combined with AND. */
export class ListStoreEventsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: STORE_NAMES, example: 'stripe' })
  @IsOptional()
  @IsIn(STORE_NAMES)
  store?: StoreName;

  @ApiPropertyOptional({ enum: STORE_EVENT_STATUSES, example: 'failed' })
  @IsOptional()
  @IsIn(STORE_EVENT_STATUSES)
  status?: StoreEventStatus;

  @ApiPropertyOptional({ type: 'integer', example: 42, description: 'only events that touched this licence' })
  @IsOptional()
  @Transform(toQueryInteger)
  @IsInt()
  @Min(1)
  @Max(2147483647)
  license_id?: number;

  @ApiPropertyOptional({
    enum: ['true', 'false'],
    example: 'true',
    description:
      'true: only events that need attention (failed ones, and ignored ones for a price without a plan, reason_code NO_PLAN, not replayed since); false: only the others',
  })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'needs_attention must be true or false' })
  needs_attention?: 'true' | 'false';
}

/** One store event as the ledger keeps it (the payload stays in the database). */
export class StoreEventDto {
  @ApiProperty({ example: '17' }) id: string;
  @ApiProperty({ enum: STORE_NAMES, example: 'stripe' }) store: StoreName;
  @ApiProperty({ example: 'evt_1Q2w3E4r5T6y7U8i' }) event_id: string;
  @ApiProperty({ example: 'invoice.paid' }) type: string;
  @ApiProperty({ enum: STORE_EVENT_STATUSES, example: 'processed' }) status: StoreEventStatus;
  @ApiProperty({ format: 'date-time' }) received_at: string;
  @ApiProperty({ nullable: true, type: String, format: 'date-time', description: "the store's time of the event" }) occurred_at:
    string | null;
  @ApiProperty({ nullable: true, type: String, example: 'sub_1Q2w3E4r5T6y7U8i' }) subscription_id: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'purchase',
    description:
      "purchase, renewal, plan_change, end or refund; customer for a buyer's name and e-mail (Paddle); null when none was applied",
  })
  action: string | null;
  @ApiProperty({ nullable: true, type: 'integer', example: 42, description: 'the licence it touched' }) license_id: number | null;
  @ApiProperty({ nullable: true, type: String, example: null, description: 'why it was ignored, is pending or failed' }) error:
    string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    enum: [...STORE_EVENT_REASON_CODES, null],
    example: null,
    description: 'why it was ignored, is pending or failed, as a code (docs/stores.md, Reason codes); null when processed',
  })
  reason_code: StoreEventReasonCode | null;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'date-time',
    example: null,
    description: 'when staff last replayed the event (docs/stores.md, Needs attention); null when never replayed',
  })
  replayed_at: string | null;

  static from(e: StoreEvent): StoreEventDto {
    return apiObject(
      { id: String(e.id) },
      apiFields(e, 'store', 'eventId', 'type', 'status'),
      apiTimes(e, 'receivedAt', 'occurredAt'),
      apiFields(e, 'subscriptionId', 'action', 'licenseId', 'error', 'reasonCode'),
      apiTimes(e, 'replayedAt'),
    );
  }
}
