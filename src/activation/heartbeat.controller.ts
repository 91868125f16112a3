import { Body, Controller, HttpCode, Post, UsePipes } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { RateLimit } from '../common/http/throttling';
import { lenientValidationPipe } from '../common/http/validation.pipe';
import { ActivationService } from './activation.service';
import { SeatRequestDto } from './dto/client-requests.dto';
import { HeartbeatResponseDto } from './dto/client-responses.dto';

/** The client's liveness signal for floating seats (docs/client-api.md, Heartbeat); same conventions as the other client routes. */
@ApiTags('client')
@Controller('api/v1')
@UsePipes(lenientValidationPipe)
@ApiServiceUnavailableResponse({ description: 'Database unavailable', type: ErrorResponseDto })
export class HeartbeatController {
  constructor(private readonly activation: ActivationService) {}

  @Post('heartbeat')
  @HttpCode(200)
  @RateLimit('heartbeat')
  @ApiOperation({
    summary: "Keep this machine's seat alive",
    description:
      "Refreshes the seat's last_seen_at. With a heartbeat timeout in the licence's policy, a seat not heard from for that long is released (reason heartbeat_timeout); send one well before next_heartbeat_before.",
  })
  @ApiOkResponse({ type: HeartbeatResponseDto })
  @ApiBadRequestResponse({
    type: ErrorResponseDto,
    description: 'VALIDATION_ERROR, INVALID_KEY, NOT_ACTIVATED (no live seat for this machine: never activated, released or dead)',
  })
  heartbeat(@Body() body: SeatRequestDto): Promise<HeartbeatResponseDto> {
    return this.activation.heartbeat(body);
  }
}
