import { Body, Controller, HttpCode, Post, UsePipes } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { Actor, CurrentActor } from '../common/auth/actor';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { RateLimit } from '../common/http/throttling';
import { lenientValidationPipe } from '../common/http/validation.pipe';
import { ActivationService } from './activation.service';
import { ActivateRequestDto, SeatRequestDto } from './dto/client-requests.dto';
import { DeactivateResponseDto, SignedLicenseDto, ValidateResponseDto } from './dto/client-responses.dto';
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
  @ApiOperation({ summary: 'Activate a licence on this machine; returns the signed licence' })
  @ApiOkResponse({ type: SignedLicenseDto })
  @ApiBadRequestResponse({
    type: ErrorResponseDto,
    description:
      'VALIDATION_ERROR, or first failing of INVALID_KEY, PRODUCT_MISMATCH, KEY_REVOKED, KEY_SUSPENDED, KEY_EXPIRED, ALREADY_ACTIVATED (details.activated_on, details.activated_at)',
  })
  activate(@Body() body: ActivateRequestDto, @CurrentActor() actor: Actor): Promise<SignedLicense> {
    return this.activation.activate(body, actor);
  }

  @Post('deactivate')
  @HttpCode(200)
  @RateLimit('deactivate')
  @ApiOperation({ summary: "Release this machine's seat so the licence can move to another machine" })
  @ApiOkResponse({ type: DeactivateResponseDto })
  @ApiBadRequestResponse({
    type: ErrorResponseDto,
    description:
      'VALIDATION_ERROR, INVALID_KEY, NOT_ACTIVATED, DEACTIVATION_LIMIT_REACHED (policy max_deactivations_per_30_days; details.next_allowed_at)',
  })
  deactivate(@Body() body: SeatRequestDto, @CurrentActor() actor: Actor): Promise<DeactivateResponseDto> {
    return this.activation.deactivate(body, actor);
  }

  @Post('validate')
  @HttpCode(200)
  @RateLimit('validate')
  @ApiOperation({ summary: 'Optional online check of a licence on this machine' })
  @ApiOkResponse({ type: ValidateResponseDto })
  @ApiBadRequestResponse({ type: ErrorResponseDto, description: 'VALIDATION_ERROR, INVALID_KEY' })
  validate(@Body() body: SeatRequestDto): Promise<ValidateResponseDto> {
    return this.activation.validate(body);
  }
}
