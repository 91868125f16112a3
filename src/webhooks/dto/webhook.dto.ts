import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsBoolean, IsIn, IsOptional, IsString } from 'class-validator';
import { PageQueryDto } from '../../common/http/page-query.dto';
import { IsStorableText, MaxChars, MinChars } from '../../common/validation/validators';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../webhook.entities';
import { ALL_EVENTS, WEBHOOK_EVENT_TYPES } from '../webhook-events';

const EVENTS_DESCRIPTION = 'Event types to receive, or ["*"] for all of them (alone)';

export class CreateWebhookDto {
  @ApiProperty({
    example: 'https://billing.example.com/hooks/licences',
    minLength: 1,
    maxLength: 2048,
    description: 'http(s); must not resolve to a loopback, private, link-local or metadata address',
  })
  @IsString()
  @MinChars(1)
  @MaxChars(2048)
  url: string;

  @ApiProperty({
    type: [String],
    enum: [...WEBHOOK_EVENT_TYPES, ALL_EVENTS],
    example: ['license.created', 'license.revoked'],
    description: EVENTS_DESCRIPTION,
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(WEBHOOK_EVENT_TYPES.length)
  @ArrayUnique()
  @IsIn([...WEBHOOK_EVENT_TYPES, ALL_EVENTS], { each: true })
  events: string[];

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 500, example: 'Billing system' })
  @IsOptional()
  @IsString()
  @MaxChars(500)
  @IsStorableText()
  description?: string | null;

  @ApiPropertyOptional({ type: Boolean, description: 'Default true; an inactive endpoint receives nothing' })
  @IsOptional()
  @IsBoolean()
  active?: boolean;
}

export class UpdateWebhookDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 2048 })
  @IsOptional()
  @IsString()
  @MinChars(1)
  @MaxChars(2048)
  url?: string;

  @ApiPropertyOptional({ type: [String], enum: [...WEBHOOK_EVENT_TYPES, ALL_EVENTS], description: EVENTS_DESCRIPTION })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(WEBHOOK_EVENT_TYPES.length)
  @ArrayUnique()
  @IsIn([...WEBHOOK_EVENT_TYPES, ALL_EVENTS], { each: true })
  events?: string[];

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 500 })
  @IsOptional()
  @IsString()
  @MaxChars(500)
  @IsStorableText()
  description?: string | null;

  @ApiPropertyOptional({ type: Boolean })
  @IsOptional()
  @IsBoolean()
  active?: boolean;
}

export class WebhookEndpointDto {
  @ApiProperty({ type: 'integer', example: 1 }) id: number;
  @ApiProperty({ example: 'https://billing.example.com/hooks/licences' }) url: string;
  @ApiProperty({ type: [String], example: ['license.created'] }) events: string[];
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty() active: boolean;
  @ApiProperty({
    type: [String],
    nullable: true,
    example: null,
    description:
      "null: events of every product (and those about no product). Made by a token limited to products: those products' current codes, and only their licence and product events",
  })
  products: string[] | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class CreatedWebhookDto extends WebhookEndpointDto {
  @ApiProperty({ example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', description: 'Shown only here (and by rotate-secret): store it now' })
  secret: string;
}

export class WebhookSecretDto {
  @ApiProperty({ example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', description: 'The new secret; the old one stops signing at once' })
  secret: string;
}

export class WebhookDeliveryDto {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty({ example: 'msg_2b6f1c0e9d8a4f7b8c1d2e3f4a5b6c7d', description: 'The webhook-id header: the same on every attempt' })
  event_id: string;
  @ApiProperty({ example: 'license.created' }) event_type: string;
  @ApiProperty({ enum: DELIVERY_STATUSES }) status: DeliveryStatus;
  @ApiProperty({ type: 'integer' }) attempts: number;
  @ApiProperty({ type: 'integer', nullable: true }) last_status_code: number | null;
  @ApiProperty({ type: String, nullable: true }) last_error: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) next_attempt_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) delivered_at: string | null;
}

export class ListDeliveriesQueryDto extends PageQueryDto {}
