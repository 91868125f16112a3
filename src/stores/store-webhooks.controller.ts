import { Controller, Headers, HttpCode, Post, Req } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiHeader,
  ApiInternalServerErrorResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiSecurity,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { RawBodyRoute } from '../common/http/raw-body';
import { StoreEventDto } from './dto/store-event.dto';
import { StoreEventsService } from './store-events.service';

/** Most a store sends in one event (docs/stores.md, Raw bodies). */
export const STORE_EVENT_BODY_LIMIT = '1mb';

/** Inbound store events: authenticated by the store's signature over the raw bytes, no API key, no client rate limit. */
@ApiTags('stores')
@Controller('api/v1/stores')
export class StoreWebhooksController {
  constructor(private readonly events: StoreEventsService) {}

  @Post('stripe/events')
  @HttpCode(200)
  @RawBodyRoute({ limit: STORE_EVENT_BODY_LIMIT })
  @ApiSecurity({})
  @ApiOperation({
    summary: 'Stripe webhook events (docs/stores.md)',
    description:
      'Verified with STRIPE_WEBHOOK_SECRET over the raw body (up to 1 MiB), 300 s tolerance. Each event is kept once; a replay answers 200 and changes nothing.',
  })
  @ApiHeader({ name: 'Stripe-Signature', required: true })
  @ApiOkResponse({ type: StoreEventDto, description: 'processed, ignored or pending' })
  @ApiBadRequestResponse({
    description: 'INVALID_SIGNATURE (nothing stored), or VALIDATION_ERROR for a body that is no event',
    type: ErrorResponseDto,
  })
  @ApiNotFoundResponse({ description: 'NOT_FOUND: STRIPE_WEBHOOK_SECRET is unset', type: ErrorResponseDto })
  @ApiPayloadTooLargeResponse({ description: 'PAYLOAD_TOO_LARGE: over 1 MiB', type: ErrorResponseDto })
  @ApiInternalServerErrorResponse({ description: 'STORE_EVENT_FAILED: stored failed; Stripe retries', type: ErrorResponseDto })
  stripe(@Req() req: Request, @Headers('stripe-signature') signature: string | undefined): Promise<StoreEventDto> {
    return this.events.receive('stripe', req.body, signature);
  }

  @Post('paddle/events')
  @HttpCode(200)
  @RawBodyRoute({ limit: STORE_EVENT_BODY_LIMIT })
  @ApiSecurity({})
  @ApiOperation({
    summary: 'Paddle Billing webhook events (docs/stores.md)',
    description:
      'Paddle-Signature (ts=...;h1=...) is an HMAC-SHA256 over `ts:body` with PADDLE_WEBHOOK_SECRET; any h1 may match; 300 s window. Each event is kept once by its event_id.',
  })
  @ApiHeader({ name: 'Paddle-Signature', required: true })
  @ApiOkResponse({ type: StoreEventDto, description: 'processed, ignored or pending' })
  @ApiBadRequestResponse({
    description: 'INVALID_SIGNATURE (nothing stored), or VALIDATION_ERROR for a body that is no event',
    type: ErrorResponseDto,
  })
  @ApiNotFoundResponse({ description: 'NOT_FOUND: PADDLE_WEBHOOK_SECRET is unset', type: ErrorResponseDto })
  @ApiPayloadTooLargeResponse({ description: 'PAYLOAD_TOO_LARGE: over 1 MiB', type: ErrorResponseDto })
  @ApiInternalServerErrorResponse({ description: 'STORE_EVENT_FAILED: stored failed; Paddle retries', type: ErrorResponseDto })
  paddle(@Req() req: Request, @Headers('paddle-signature') signature: string | undefined): Promise<StoreEventDto> {
    return this.events.receive('paddle', req.body, signature);
  }

  @Post('lemonsqueezy/events')
  @HttpCode(200)
  @RawBodyRoute({ limit: STORE_EVENT_BODY_LIMIT })
  @ApiSecurity({})
  @ApiOperation({
    summary: 'Lemon Squeezy webhook events (docs/stores.md)',
    description:
      'X-Signature is the hex HMAC-SHA256 of the raw body with LEMONSQUEEZY_WEBHOOK_SECRET (no timestamp exists). The event id is the hex SHA-256 of the body: the same body twice is one event.',
  })
  @ApiHeader({ name: 'X-Signature', required: true })
  @ApiOkResponse({ type: StoreEventDto, description: 'processed, ignored or pending' })
  @ApiBadRequestResponse({
    description: 'INVALID_SIGNATURE (nothing stored), or VALIDATION_ERROR for a body that is no event',
    type: ErrorResponseDto,
  })
  @ApiNotFoundResponse({ description: 'NOT_FOUND: LEMONSQUEEZY_WEBHOOK_SECRET is unset', type: ErrorResponseDto })
  @ApiPayloadTooLargeResponse({ description: 'PAYLOAD_TOO_LARGE: over 1 MiB', type: ErrorResponseDto })
  @ApiInternalServerErrorResponse({ description: 'STORE_EVENT_FAILED: stored failed; Lemon Squeezy retries', type: ErrorResponseDto })
  lemonsqueezy(@Req() req: Request, @Headers('x-signature') signature: string | undefined): Promise<StoreEventDto> {
    return this.events.receive('lemonsqueezy', req.body, signature);
  }
}
