import { Body, Controller, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import {
  ApiBody,
  ApiConflictResponse,
  ApiConsumes,
  ApiCreatedResponse,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { AdminRoute } from '../common/auth/admin-route.decorator';
import { DeleteRoute } from '../common/http/delete-route';
import { Actor, CurrentActor, CurrentProductScope, type ProductScope } from '../common/auth/actor';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { IdParamPipe } from '../common/http/id-param.pipe';
import { StreamedBodyRoute } from '../common/http/raw-body';
import { CreateReleaseDto, ReleaseArtifactDto, ReleaseDownloadsDto, ReleaseDto } from './dto/release.dto';
import { type ArtifactUpload, ReleasesService } from './releases.service';
import { UploadedArtifact } from './artifact-upload';

const NOT_FOUND = { description: "NOT_FOUND: no such release (or not one of the token's products)", type: ErrorResponseDto };

/** The admin's releases (docs/releases.md, Publishing); a token limited to products sees only theirs. */
@ApiTags('admin: releases')
@Controller('api/v1/admin')
export class ReleasesController {
  constructor(private readonly releases: ReleasesService) {}

  @Post('products/:code/releases')
  @AdminRoute('releases:manage')
  @HttpCode(201)
  @ApiOperation({ summary: 'Create a draft release of a product', description: 'Upload artifacts, then publish it.' })
  @ApiCreatedResponse({ type: ReleaseDto })
  @ApiNotFoundResponse({ description: "NOT_FOUND: no such product (or not one of the token's products)", type: ErrorResponseDto })
  @ApiConflictResponse({ description: 'CONFLICT: the product already has this version', type: ErrorResponseDto })
  create(
    @Param('code') code: string,
    @Body() body: CreateReleaseDto,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() scope: ProductScope,
  ): Promise<ReleaseDto> {
    return this.releases.create(code, body, actor, scope);
  }

  @Get('products/:code/releases')
  @AdminRoute('releases:manage')
  @ApiOperation({ summary: "A product's releases, newest created first, with artifacts and download counts" })
  @ApiOkResponse({ type: [ReleaseDto] })
  @ApiNotFoundResponse({ description: "NOT_FOUND: no such product (or not one of the token's products)", type: ErrorResponseDto })
  list(@Param('code') code: string, @CurrentProductScope() scope: ProductScope): Promise<ReleaseDto[]> {
    return this.releases.list(code, scope);
  }

  @Get('releases/:id')
  @AdminRoute('releases:manage')
  @ApiOperation({ summary: 'One release with its artifacts and download count' })
  @ApiOkResponse({ type: ReleaseDto })
  @ApiNotFoundResponse(NOT_FOUND)
  get(@Param('id', IdParamPipe) id: number, @CurrentProductScope() scope: ProductScope): Promise<ReleaseDto> {
    return this.releases.get(id, scope);
  }

  @Get('releases/:id/downloads')
  @AdminRoute('releases:manage')
  @ApiOperation({ summary: 'Downloads of a release in total and per UTC day (last 30 days)' })
  @ApiOkResponse({ type: ReleaseDownloadsDto })
  @ApiNotFoundResponse(NOT_FOUND)
  downloads(@Param('id', IdParamPipe) id: number, @CurrentProductScope() scope: ProductScope): Promise<ReleaseDownloadsDto> {
    return this.releases.downloads(id, scope);
  }

  @Put('releases/:id/artifacts/:filename')
  @AdminRoute('releases:manage')
  @StreamedBodyRoute()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Upload an artifact of a draft release as the raw request body (streamed; any Content-Type)',
    description:
      'SHA-256 and SHA-512 are computed on the way. The same filename again replaces it while the release is a draft. X-Artifact-Signature keeps an updater signature (Tauri needs one).',
  })
  @ApiConsumes('application/octet-stream')
  @ApiBody({ required: true, description: 'the file itself, as raw bytes', schema: { type: 'string', format: 'binary' } })
  @ApiQuery({ name: 'platform', enum: ['linux', 'darwin', 'win32'] })
  @ApiQuery({ name: 'arch', enum: ['x64', 'arm64', 'ia32', 'arm', 'universal'] })
  @ApiHeader({
    name: 'X-Artifact-Signature',
    required: false,
    description: "the updater's signature of the file (Tauri: the .sig file's text)",
  })
  @ApiCreatedResponse({ type: ReleaseArtifactDto })
  @ApiNotFoundResponse(NOT_FOUND)
  @ApiConflictResponse({ description: 'CONFLICT: the release is published', type: ErrorResponseDto })
  @ApiPayloadTooLargeResponse({ description: 'PAYLOAD_TOO_LARGE: over RELEASES_MAX_BYTES', type: ErrorResponseDto })
  upload(
    @Param('id', IdParamPipe) id: number,
    @Param('filename') filename: string,
    @UploadedArtifact() upload: Omit<ArtifactUpload, 'filename'>,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() scope: ProductScope,
  ): Promise<ReleaseArtifactDto> {
    return this.releases.upload(id, { filename, ...upload }, actor, scope);
  }

  @Post('releases/:id/publish')
  @AdminRoute('releases:manage')
  @HttpCode(200)
  @ApiOperation({ summary: 'Publish a draft: checks and feeds offer it from now on (event release.published)' })
  @ApiOkResponse({ type: ReleaseDto })
  @ApiNotFoundResponse(NOT_FOUND)
  @ApiConflictResponse({ description: 'CONFLICT: already published, or no artifact yet', type: ErrorResponseDto })
  publish(
    @Param('id', IdParamPipe) id: number,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() scope: ProductScope,
  ): Promise<ReleaseDto> {
    return this.releases.publish(id, actor, scope);
  }

  @Post('releases/:id/yank')
  @AdminRoute('releases:manage')
  @HttpCode(200)
  @ApiOperation({ summary: 'Yank a published release: no check, feed or link offers it any more (event release.yanked)' })
  @ApiOkResponse({ type: ReleaseDto })
  @ApiNotFoundResponse(NOT_FOUND)
  @ApiConflictResponse({ description: 'CONFLICT: a draft, or already yanked', type: ErrorResponseDto })
  yank(
    @Param('id', IdParamPipe) id: number,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() scope: ProductScope,
  ): Promise<ReleaseDto> {
    return this.releases.yank(id, actor, scope);
  }

  @DeleteRoute('releases/:id', NOT_FOUND)
  @AdminRoute('releases:manage')
  @ApiOperation({ summary: 'Delete a draft release and its artifacts' })
  @ApiConflictResponse({ description: 'CONFLICT: a published release is yanked, never deleted', type: ErrorResponseDto })
  remove(@Param('id', IdParamPipe) id: number, @CurrentActor() actor: Actor, @CurrentProductScope() scope: ProductScope): Promise<void> {
    return this.releases.remove(id, actor, scope);
  }
}
