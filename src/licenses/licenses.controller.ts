import { Body, Controller, Get, HttpCode, Param, Post, Put, Query, Req, Res } from '@nestjs/common';
import { ApiConflictResponse, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AdminRoute } from '../common/auth/admin-route.decorator';
import { Actor, CurrentActor, CurrentProductScope, type ProductScope } from '../common/auth/actor';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { IdParamPipe } from '../common/http/id-param.pipe';
import { EXPORT_RESPONSE, sendExport } from '../common/http/export';
import { DEFAULT_PAGE_LIMIT, KEYSET_PAGE_HEADERS, setKeysetPageHeaders } from '../common/http/page-query.dto';
import { ActivationDto } from './dto/activation.dto';
import { CreateLicenseDto, UpdateLicenseDto } from './dto/create-license.dto';
import { CreatedLicenseDto, ReleaseResultDto, ReleaseSeatsDto, RevokeLicenseDto } from './dto/license-actions.dto';
import { LicenseDetailsDto, LicenseListItemDto } from './dto/license.dto';
import { ExportLicensesQueryDto, ListLicensesQueryDto } from './dto/list-licenses.query';
import { LicensesService } from './licenses.service';
import { ChangeLicense } from './use-cases/change-license';
import { CreateLicense } from './use-cases/create-license';
import { ReleaseSeats } from './use-cases/release-seats';
import { RevokeLicense } from './use-cases/revoke-license';

const LICENSES_PATH = '/api/v1/admin/licenses';
const NOT_FOUND = { description: "NOT_FOUND: no licence with this id (among the credential's products)", type: ErrorResponseDto };

@ApiTags('admin: licenses')
@Controller(LICENSES_PATH.slice(1))
export class LicensesController {
  constructor(
    private readonly licenses: LicensesService,
    private readonly creating: CreateLicense,
    private readonly changing: ChangeLicense,
    private readonly revoking: RevokeLicense,
    private readonly releasing: ReleaseSeats,
  ) {}

  @Post()
  @AdminRoute('licenses:write')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create a licence',
    description:
      'Generates the key; expires_at follows from license_type unless given; limits are stored as overrides of the product defaults.',
  })
  @ApiCreatedResponse({ type: CreatedLicenseDto })
  async create(
    @Body() body: CreateLicenseDto,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() products: ProductScope,
  ): Promise<CreatedLicenseDto> {
    const license = await this.creating.create(body, actor, products);
    return { id: license.id, license_key: license.licenseKey, message: 'License created' };
  }

  @Get()
  @AdminRoute('licenses:read')
  @ApiOperation({
    summary: 'List licences',
    description:
      'Newest first. Filters combine with AND; q is a literal case-insensitive substring of customer name, e-mail or key. ' +
      'Page with `after` (keyset: follow the `Link` rel="next" header, the same cost at any depth) or `offset` (costs grow with the offset).',
  })
  @ApiOkResponse({ type: [LicenseListItemDto], headers: KEYSET_PAGE_HEADERS })
  async list(
    @Query() query: ListLicensesQueryDto,
    @CurrentProductScope() products: ProductScope,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<LicenseListItemDto[]> {
    const page = await this.licenses.listLicenses(query, products);
    return setKeysetPageHeaders(res, req, LICENSES_PATH, query.limit ?? DEFAULT_PAGE_LIMIT, page);
  }

  // Before ':id', which would otherwise take "export" for an id.
  @Get('export')
  @AdminRoute('licenses:read')
  @ApiOperation({
    summary: 'Export every matching licence (CSV or NDJSON)',
    description:
      'The list filters, no paging, newest first; streamed from a database cursor. CSV: RFC 4180 with a header row; a cell starting with = + - @ tab or CR gets a leading apostrophe.',
  })
  @ApiOkResponse(EXPORT_RESPONSE)
  async export(@Query() query: ExportLicensesQueryDto, @CurrentProductScope() products: ProductScope, @Res() res: Response): Promise<void> {
    sendExport(res, await this.licenses.exportLicenses(query, products), query.format, 'licenses');
  }

  @Get(':id')
  @AdminRoute('licenses:read')
  @ApiOperation({
    summary: 'Get a licence with status, merged limits and current seats',
    description: 'Every stored field, the derived status and the product.',
  })
  @ApiOkResponse({ type: LicenseDetailsDto })
  @ApiNotFoundResponse(NOT_FOUND)
  get(@Param('id', IdParamPipe) id: number, @CurrentProductScope() products: ProductScope): Promise<LicenseDetailsDto> {
    return this.licenses.getLicense(id, products);
  }

  @Put(':id')
  @AdminRoute('licenses:write')
  @ApiOperation({
    summary: 'Change a licence (partial)',
    description: 'active false suspends, true reinstates; limits replace the own overrides; expires_at may be in the past.',
  })
  @ApiOkResponse({ type: LicenseDetailsDto })
  @ApiNotFoundResponse(NOT_FOUND)
  @ApiConflictResponse({ description: 'CONFLICT: a revoked licence cannot be made active again', type: ErrorResponseDto })
  update(
    @Param('id', IdParamPipe) id: number,
    @Body() body: UpdateLicenseDto,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() products: ProductScope,
  ): Promise<LicenseDetailsDto> {
    return this.changing.change(id, body, actor, products);
  }

  @Post(':id/revoke')
  @AdminRoute('licenses:write')
  @HttpCode(200)
  @ApiOperation({ summary: 'Revoke a licence for good', description: 'Seats stay bound; bound machines then validate as revoked.' })
  @ApiOkResponse({ type: LicenseDetailsDto })
  @ApiNotFoundResponse(NOT_FOUND)
  @ApiConflictResponse({ description: 'ALREADY_REVOKED', type: ErrorResponseDto })
  revoke(
    @Param('id', IdParamPipe) id: number,
    @Body() body: RevokeLicenseDto,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() products: ProductScope,
  ): Promise<LicenseDetailsDto> {
    return this.revoking.revoke(id, body.reason, actor, products);
  }

  @Post(':id/release')
  @AdminRoute('licenses:write')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Force-release seats',
    description: 'Releases the seat of machine_fingerprint, or every seat when it is omitted (send `{}`).',
  })
  @ApiOkResponse({ type: ReleaseResultDto })
  @ApiNotFoundResponse(NOT_FOUND)
  @ApiConflictResponse({ description: 'NOT_ACTIVATED: nothing (or not that machine) is bound', type: ErrorResponseDto })
  release(
    @Param('id', IdParamPipe) id: number,
    @Body() body: ReleaseSeatsDto,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() products: ProductScope,
  ): Promise<ReleaseResultDto> {
    return this.releasing.release(id, body, actor, products);
  }

  @Get(':id/activations')
  @AdminRoute('licenses:read')
  @ApiOperation({
    summary: 'Every activation record of a licence, current and past, newest first',
    description: 'Released records keep released_at and release_reason.',
  })
  @ApiOkResponse({ type: [ActivationDto] })
  @ApiNotFoundResponse(NOT_FOUND)
  activations(@Param('id', IdParamPipe) id: number, @CurrentProductScope() products: ProductScope): Promise<ActivationDto[]> {
    return this.licenses.listActivations(id, products);
  }
}
