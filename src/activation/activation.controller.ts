import { Body, Controller, HttpCode, Post, UsePipes } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import { Actor, CurrentActor } from '../common/auth/actor';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { RateLimit } from '../common/http/throttling';
import { lenientValidationPipe } from '../common/http/validation.pipe';
import { ActivationService } from './activation.service';
import * as requests from './dto/client-requests.dto';
import { DeactivateResponseDto, SignedLicenseDto, UsageResponseDto, ValidateResponseDto } from './dto/client-responses.dto';
import { LicenseFileResponseDto } from './dto/license-file.dto';
import type { SignedLicense } from './license-payload';

/** Client API: no authentication, rate-limited per IP; unknown body fields are ignored (newer clients may send more). */
@ApiTags('client')
@Controller('api/v1')
@UsePipes(lenientValidationPipe)
@ApiServiceUnavailableResponse({ description: 'Database unavailable', type: ErrorResponseDto })
export class ActivationController {
  constructor(private readonly activation: ActivationService) {}

  @Post('activate')
  @HttpCode(200)
  @RateLimit('activate')
  @ApiOperation({
    summary: 'Activate a licence on this machine; returns the signed licence',
    description:
      'Binds a seat to machine_fingerprint. Activating again from a bound machine succeeds and keeps the original activated_at. Verify `signature` with GET /api/v1/public-key.',
  })
  @ApiOkResponse({ type: SignedLicenseDto })
  @ApiBadRequestResponse({
    type: ErrorResponseDto,
    description:
      'VALIDATION_ERROR, or first failing of INVALID_KEY, PRODUCT_MISMATCH, KEY_REVOKED, KEY_SUSPENDED, KEY_EXPIRED, ALREADY_ACTIVATED (details.activated_on, details.activated_at)',
  })
  activate(@Body() body: requests.ActivateRequestDto, @CurrentActor() actor: Actor): Promise<SignedLicense> {
    return this.activation.activate(body, actor);
  }

  @Post('deactivate')
  @HttpCode(200)
  @RateLimit('deactivate')
  @ApiOperation({
    summary: "Release this machine's seat so the licence can move to another machine",
    description: 'can_reactivate tells whether the licence could be activated again now (not revoked, suspended or expired).',
  })
  @ApiOkResponse({ type: DeactivateResponseDto })
  @ApiBadRequestResponse({
    type: ErrorResponseDto,
    description:
      'VALIDATION_ERROR, INVALID_KEY, NOT_ACTIVATED, DEACTIVATION_LIMIT_REACHED (policy max_deactivations_per_30_days; details.next_allowed_at)',
  })
  deactivate(@Body() body: requests.SeatRequestDto, @CurrentActor() actor: Actor): Promise<DeactivateResponseDto> {
    return this.activation.deactivate(body, actor);
  }

  @Post('validate')
  @HttpCode(200)
  @RateLimit('validate')
  @ApiOperation({
    summary: 'Optional online check of a licence on this machine',
    description:
      'valid is true when the status is active or grace and this machine holds a seat; otherwise code says why. With `nonce`, the answer also carries nonce, license_key, machine_fingerprint, checked_at, key_id and signature.',
  })
  @ApiOkResponse({ type: ValidateResponseDto })
  @ApiBadRequestResponse({ type: ErrorResponseDto, description: 'VALIDATION_ERROR (also a malformed nonce), INVALID_KEY' })
  validate(@Body() body: requests.ValidateRequestDto): Promise<ValidateResponseDto> {
    return this.activation.validate(body);
  }

  @Post('usage')
  @HttpCode(200)
  @RateLimit('validate')
  @ApiOperation({
    summary: 'Count uses of a metered licence from a machine that holds a seat (counts against the validate rate limit)',
    description:
      'increment (default 1) is added unless it would pass max_uses. With idempotency_key, a retry of the same body returns the first answer and counts nothing. With `nonce`, the answer is signed like a validate answer.',
  })
  @ApiOkResponse({ type: UsageResponseDto })
  @ApiBadRequestResponse({
    type: ErrorResponseDto,
    description: 'VALIDATION_ERROR, INVALID_KEY, KEY_REVOKED, KEY_SUSPENDED, KEY_EXPIRED, NOT_ACTIVATED (this machine holds no seat)',
  })
  @ApiForbiddenResponse({ type: ErrorResponseDto, description: 'USAGE_LIMIT_REACHED: nothing counted; details.remaining' })
  @ApiConflictResponse({ type: ErrorResponseDto, description: 'IDEMPOTENCY_KEY_REUSED: this key came with another body' })
  usage(@Body() body: requests.UsageRequestDto, @CurrentActor() actor: Actor): Promise<UsageResponseDto> {
    return this.activation.usage(body, actor);
  }

  @Post('trials')
  @HttpCode(201)
  @RateLimit('activate')
  @ApiOperation({
    summary: 'Start a self-service trial of a product on this machine; returns the signed trial licence',
    description:
      'A new TRIAL licence (customer name: hostname, else "Trial"), bound to this machine, expiring after the product\'s trial.days, grace 0. One trial per product and machine, ever. Counts against the activate rate limit.',
  })
  @ApiCreatedResponse({ type: SignedLicenseDto })
  @ApiBadRequestResponse({
    type: ErrorResponseDto,
    description: 'VALIDATION_ERROR (also an unknown or inactive product), TRIALS_DISABLED (the product offers no trials)',
  })
  @ApiConflictResponse({ type: ErrorResponseDto, description: 'TRIAL_ALREADY_USED: this machine already had a trial of this product' })
  trial(@Body() body: requests.TrialRequestDto, @CurrentActor() actor: Actor): Promise<SignedLicense> {
    return this.activation.startTrial(body, actor);
  }

  @Post('license-file')
  @HttpCode(200)
  @RateLimit('validate')
  @ApiOperation({
    summary: 'A signed licence file for offline use by a machine that holds a seat (counts against the validate rate limit)',
  })
  @ApiOkResponse({ type: LicenseFileResponseDto })
  @ApiBadRequestResponse({
    type: ErrorResponseDto,
    description: 'VALIDATION_ERROR, INVALID_KEY, KEY_REVOKED, KEY_SUSPENDED, KEY_EXPIRED, NOT_ACTIVATED (this machine holds no seat)',
  })
  licenseFile(@Body() body: requests.LicenseFileRequestDto, @CurrentActor() actor: Actor): Promise<LicenseFileResponseDto> {
    return this.activation.issueLicenseFile(body, actor);
  }
}
