import { Body, Controller, Get, HttpCode, Param, Post, Put, Query, Res } from '@nestjs/common';
import { ApiConflictResponse, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AdminApi } from '../common/auth/admin-api.decorator';
import { Actor, CurrentActor } from '../common/auth/actor';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { IdParamPipe } from '../common/http/id-param.pipe';
import { setTotalCount, TOTAL_COUNT_HEADERS } from '../common/http/page-query.dto';
import { ActivationDto } from './dto/activation.dto';
import { CreateLicenseDto, UpdateLicenseDto } from './dto/create-license.dto';
import { CreatedLicenseDto, ReleaseResultDto, ReleaseSeatsDto, RevokeLicenseDto } from './dto/license-actions.dto';
import { LicenseDetailsDto, LicenseListItemDto } from './dto/license.dto';
import { ListLicensesQueryDto } from './dto/list-licenses.query';
import { LicensesService } from './licenses.service';

const NOT_FOUND = { description: 'NOT_FOUND: no licence with this id', type: ErrorResponseDto };

@ApiTags('admin: licenses')
@AdminApi()
@Controller('api/v1/admin/licenses')
export class LicensesController {
  constructor(private readonly licenses: LicensesService) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create a licence',
    description:
      'Generates the key; expires_at follows from license_type unless given; limits are stored as overrides of the product defaults.',
  })
  @ApiCreatedResponse({ type: CreatedLicenseDto })
  async create(@Body() body: CreateLicenseDto, @CurrentActor() actor: Actor): Promise<CreatedLicenseDto> {
    const license = await this.licenses.createLicense(body, actor);
    return { id: license.id, license_key: license.licenseKey, message: 'License created' };
  }

  @Get()
  @ApiOperation({
    summary: 'List licences',
    description: 'Newest first. Filters combine with AND; q is a literal case-insensitive substring of customer name, e-mail or key.',
  })
  @ApiOkResponse({ type: [LicenseListItemDto], headers: TOTAL_COUNT_HEADERS })
  async list(@Query() query: ListLicensesQueryDto, @Res({ passthrough: true }) res: Response): Promise<LicenseListItemDto[]> {
    return setTotalCount(res, await this.licenses.listLicenses(query));
  }

  @Get(':id')
  @ApiOperation({
    summary: 'Get a licence with status, merged limits and current seats',
    description: 'Every stored field, the derived status and the product.',
  })
  @ApiOkResponse({ type: LicenseDetailsDto })
  @ApiNotFoundResponse(NOT_FOUND)
  get(@Param('id', IdParamPipe) id: number): Promise<LicenseDetailsDto> {
    return this.licenses.getLicense(id);
  }

  @Put(':id')
  @ApiOperation({
    summary: 'Change a licence (partial)',
    description: 'active false suspends, true reinstates; limits replace the own overrides; expires_at may be in the past.',
  })
  @ApiOkResponse({ type: LicenseDetailsDto })
  @ApiNotFoundResponse(NOT_FOUND)
  @ApiConflictResponse({ description: 'CONFLICT: a revoked licence cannot be made active again', type: ErrorResponseDto })
  update(@Param('id', IdParamPipe) id: number, @Body() body: UpdateLicenseDto, @CurrentActor() actor: Actor): Promise<LicenseDetailsDto> {
    return this.licenses.updateLicense(id, body, actor);
  }

  @Post(':id/revoke')
  @HttpCode(200)
  @ApiOperation({ summary: 'Revoke a licence for good', description: 'Seats stay bound; bound machines then validate as revoked.' })
  @ApiOkResponse({ type: LicenseDetailsDto })
  @ApiNotFoundResponse(NOT_FOUND)
  @ApiConflictResponse({ description: 'ALREADY_REVOKED', type: ErrorResponseDto })
  revoke(@Param('id', IdParamPipe) id: number, @Body() body: RevokeLicenseDto, @CurrentActor() actor: Actor): Promise<LicenseDetailsDto> {
    return this.licenses.revokeLicense(id, body.reason, actor);
  }

  @Post(':id/release')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Force-release seats',
    description: 'Releases the seat of machine_fingerprint, or every seat when it is omitted (send `{}`).',
  })
  @ApiOkResponse({ type: ReleaseResultDto })
  @ApiNotFoundResponse(NOT_FOUND)
  @ApiConflictResponse({ description: 'NOT_ACTIVATED: nothing (or not that machine) is bound', type: ErrorResponseDto })
  release(@Param('id', IdParamPipe) id: number, @Body() body: ReleaseSeatsDto, @CurrentActor() actor: Actor): Promise<ReleaseResultDto> {
    return this.licenses.releaseSeats(id, body, actor);
  }

  @Get(':id/activations')
  @ApiOperation({
    summary: 'Every activation record of a licence, current and past, newest first',
    description: 'Released records keep released_at and release_reason.',
  })
  @ApiOkResponse({ type: [ActivationDto] })
  @ApiNotFoundResponse(NOT_FOUND)
  activations(@Param('id', IdParamPipe) id: number): Promise<ActivationDto[]> {
    return this.licenses.listActivations(id);
  }
}
