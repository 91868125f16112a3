import { applyDecorators, Controller, Headers, HttpCode, Post, Req } from '@nestjs/common';
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
import { RateLimit } from '../common/http/throttling';
import type { StoreName } from '../licenses/store-names';
import { StoreEventDto } from './dto/store-event.dto';
import { StoreEventsService } from './store-events.service';

/** Most a store sends in one event (docs/stores.md, Raw bodies). */
export const STORE_EVENT_BODY_LIMIT = '1mb';

/** One store's inbound route: a raw body up to 1 MiB, no API key, and the answers every store endpoint gives. */
function StoreEventsRoute(store: StoreName, o: { title: string; header: string; secret: string; check: string }) {
  return applyDecorators(
    Post(`${store}/events`),
    HttpCode(200),
    // Its own per-IP bucket (RATE_LIMIT_STORES): a flood of unsigned requests cannot take the server's CPU (docs/stores.md, Limits).
    RateLimit('stores'),
    RawBodyRoute({ limit: STORE_EVENT_BODY_LIMIT }),
    ApiSecurity({}),
    ApiOperation({
      summary: `${o.title} webhook events (docs/stores.md)`,
      description: `${o.check} Each event is kept once; a repeat answers 200 and changes nothing.`,
    }),
    ApiHeader({ name: o.header, required: true }),
    ApiOkResponse({ type: StoreEventDto, description: 'processed, ignored or pending' }),
    ApiBadRequestResponse({
      description: 'INVALID_SIGNATURE (nothing stored), or VALIDATION_ERROR for a body that is no event',
      type: ErrorResponseDto,
    }),
    ApiNotFoundResponse({ description: `NOT_FOUND: ${o.secret} is unset`, type: ErrorResponseDto }),
    ApiPayloadTooLargeResponse({ description: 'PAYLOAD_TOO_LARGE: over 1 MiB', type: ErrorResponseDto }),
    ApiInternalServerErrorResponse({ description: `STORE_EVENT_FAILED: stored failed; ${o.title} retries`, type: ErrorResponseDto }),
  );
}

/** Inbound store events: authenticated by the store's signature over the raw bytes, no API key, their own per-IP limit. */
@ApiTags('stores')
@Controller('api/v1/stores')
export class StoreWebhooksController {
  constructor(private readonly events: StoreEventsService) {}

  @StoreEventsRoute('stripe', {
    title: 'Stripe',
    header: 'Stripe-Signature',
    secret: 'STRIPE_WEBHOOK_SECRET',
    check: 'Verified with STRIPE_WEBHOOK_SECRET over the raw body (up to 1 MiB), 300 s tolerance.',
  })
  stripe(@Req() req: Request, @Headers('stripe-signature') signature: string | undefined): Promise<StoreEventDto> {
    return this.events.receive('stripe', req.body, signature);
  }

  @StoreEventsRoute('paddle', {
    title: 'Paddle',
    header: 'Paddle-Signature',
    secret: 'PADDLE_WEBHOOK_SECRET',
    check: 'Paddle-Signature (ts=...;h1=...) is an HMAC-SHA256 over `ts:body` with PADDLE_WEBHOOK_SECRET; any h1 may match; 300 s window.',
  })
  paddle(@Req() req: Request, @Headers('paddle-signature') signature: string | undefined): Promise<StoreEventDto> {
    return this.events.receive('paddle', req.body, signature);
  }

  @StoreEventsRoute('lemonsqueezy', {
    title: 'Lemon Squeezy',
    header: 'X-Signature',
    secret: 'LEMONSQUEEZY_WEBHOOK_SECRET',
    check:
      'X-Signature is the hex HMAC-SHA256 of the raw body with LEMONSQUEEZY_WEBHOOK_SECRET (no timestamp exists); the event id is the hex SHA-256 of the body.',
  })
  lemonsqueezy(@Req() req: Request, @Headers('x-signature') signature: string | undefined): Promise<StoreEventDto> {
    return this.events.receive('lemonsqueezy', req.body, signature);
  }
}
