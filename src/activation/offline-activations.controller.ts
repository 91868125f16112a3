import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminRoute } from '../common/auth/admin-route.decorator';
import { Actor, CurrentActor, CurrentProductScope, type ProductScope } from '../common/auth/actor';
import { ApiArmoredRequestRefusal } from './armored-refusal';
import { ActivationService } from './activation.service';
import { LicenseFileResponseDto, OfflineActivationRequestDto } from './dto/license-file.dto';

/** Air-gapped activation (docs/licences.md, Offline use and air-gapped machines): staff submit the machine's activation request and get its licence file. */
@ApiTags('admin: licenses')
@AdminRoute('licenses:write')
@Controller('api/v1/admin/offline-activations')
export class OfflineActivationsController {
  constructor(private readonly activation: ActivationService) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({ summary: 'Bind the seat of an air-gapped machine from its activation request; returns its licence file' })
  @ApiOkResponse({ type: LicenseFileResponseDto })
  @ApiArmoredRequestRefusal(
    'the fields of /activate',
    'INVALID_KEY, PRODUCT_MISMATCH, KEY_REVOKED, KEY_SUSPENDED, KEY_EXPIRED, ALREADY_ACTIVATED',
  )
  activate(
    @Body() body: OfflineActivationRequestDto,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() products: ProductScope,
  ): Promise<LicenseFileResponseDto> {
    return this.activation.activateOffline(body.request, actor, products);
  }
}
