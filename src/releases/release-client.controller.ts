import { Body, Controller, Get, Headers, HttpCode, Param, Post, Req, Res, UsePipes } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiExtraModels,
  ApiNotFoundResponse,
  ApiForbiddenResponse,
  ApiHeader,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiResponse,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../common/errors/app-error';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { RateLimit } from '../common/http/throttling';
import { lenientValidationPipe } from '../common/http/validation.pipe';
import { ReleaseCheckRequestDto, ReleaseCheckResponseDto, TauriUpdateDto, UpdateArtifactDto } from './dto/release.dto';
import { ReleaseUpdatesService } from './release-updates.service';

const FEED_HEADERS = [
  ApiHeader({ name: 'Authorization', required: true, description: 'License <licence key>' }),
  ApiHeader({ name: 'X-Machine-Fingerprint', required: true, description: 'the activated machine fingerprint' }),
];
const FEED_REFUSALS = [
  ApiUnauthorizedResponse({
    description: 'UNAUTHORIZED: licence key or fingerprint missing or unknown, or the machine holds no seat',
    type: ErrorResponseDto,
  }),
  ApiBadRequestResponse({
    description: 'VALIDATION_ERROR, PRODUCT_MISMATCH, KEY_REVOKED, KEY_SUSPENDED, KEY_EXPIRED',
    type: ErrorResponseDto,
  }),
];
const applyAll =
  (decorators: MethodDecorator[]): MethodDecorator =>
  (target, key, descriptor) => {
    for (const d of decorators) d(target, key, descriptor);
  };

/** What an application asks for updates (docs/releases.md): the check, the updaters' feeds and the signed links. */
@ApiTags('client: releases')
@ApiExtraModels(UpdateArtifactDto)
@Controller('api/v1')
@UsePipes(lenientValidationPipe)
@ApiServiceUnavailableResponse({ description: 'Database unavailable', type: ErrorResponseDto })
export class ReleaseClientController {
  constructor(private readonly updates: ReleaseUpdatesService) {}

  @Post('releases/check')
  @HttpCode(200)
  @RateLimit('validate')
  @ApiOperation({
    summary: 'The newest release this activated machine may install (counts against the validate rate limit)',
    description:
      'On the channel or a more stable one, above current_version by SemVer precedence, with an artifact for the platform (and arch). Artifact urls are signed links valid RELEASES_LINK_SECONDS. With `nonce`, signed exactly like a validate answer.',
  })
  @ApiOkResponse({ type: ReleaseCheckResponseDto })
  @ApiBadRequestResponse({
    type: ErrorResponseDto,
    description:
      'VALIDATION_ERROR, or first failing of INVALID_KEY, PRODUCT_MISMATCH, KEY_REVOKED, KEY_SUSPENDED, KEY_EXPIRED, NOT_ACTIVATED',
  })
  check(@Body() body: ReleaseCheckRequestDto): Promise<ReleaseCheckResponseDto> {
    return this.updates.check(body);
  }

  @Get('feeds/electron/:product/:file')
  @RateLimit('validate')
  @ApiOperation({
    summary:
      "electron-updater's generic provider: latest.yml, latest-mac.yml, latest-linux.yml, latest-linux-arm64.yml; beta*, alpha* likewise",
    description: "electron-builder's channel file for the newest release this licence may have; file urls are signed links.",
  })
  @applyAll(FEED_HEADERS)
  @ApiResponse({ status: 200, description: 'the channel file (YAML)', content: { 'text/yaml': { schema: { type: 'string' } } } })
  @applyAll(FEED_REFUSALS)
  @ApiForbiddenResponse({
    description: 'RELEASE_NOT_ENTITLED: the product has such releases, none of them for this licence',
    type: ErrorResponseDto,
  })
  @ApiNotFoundResponse({ description: 'NOT_FOUND: not a channel file name, or no release for it', type: ErrorResponseDto })
  async electron(
    @Param('product') product: string,
    @Param('file') file: string,
    @Headers('authorization') authorization: string | undefined,
    @Headers('x-machine-fingerprint') fingerprint: string | undefined,
    @Res() res: Response,
  ): Promise<void> {
    const yaml = await this.updates.electronFeed(product, file, { authorization, fingerprint });
    res.status(200).type('text/yaml; charset=utf-8').send(yaml);
  }

  @Get('feeds/tauri/:product/:channel/:target/:arch/:current_version')
  @RateLimit('validate')
  @ApiOperation({
    summary: "The Tauri updater's endpoint: the newest release above current_version with a signed artifact for target and arch",
    description: 'target: linux, windows, darwin; arch: x86_64, aarch64, i686, armv7. 204: no update.',
  })
  @applyAll(FEED_HEADERS)
  @ApiOkResponse({ type: TauriUpdateDto })
  @ApiNoContentResponse({ description: 'no update' })
  @applyAll(FEED_REFUSALS)
  async tauri(
    @Param('product') product: string,
    @Param('channel') channel: string,
    @Param('target') target: string,
    @Param('arch') arch: string,
    @Param('current_version') currentVersion: string,
    @Headers('authorization') authorization: string | undefined,
    @Headers('x-machine-fingerprint') fingerprint: string | undefined,
    @Res() res: Response,
  ): Promise<void> {
    const update = await this.updates.tauriFeed(product, channel, target, arch, currentVersion, { authorization, fingerprint });
    if (update) res.status(200).json(update);
    else res.status(204).end();
  }

  @Get('releases/downloads/:token/:filename')
  @RateLimit('validate')
  @ApiOperation({
    summary: "A signed download link: the artifact's bytes (Range supported) or a redirect to its presigned storage URL",
    description:
      'No credential: the link is the credential, valid RELEASES_LINK_SECONDS. Counted as a download unless a Range starts past byte 0; a malformed Range is ignored (the whole file, counted).',
  })
  @ApiResponse({
    status: 200,
    description: 'the bytes',
    content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
  })
  @ApiResponse({
    status: 206,
    description: 'the requested range',
    content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
  })
  @ApiResponse({ status: 302, description: 'S3 storage: the presigned URL of the bytes' })
  @ApiResponse({
    status: 416,
    description: 'every range of the Range header starts past the end: no body, Content-Range bytes */SIZE; not counted',
    headers: { 'Content-Range': { description: 'bytes */SIZE', schema: { type: 'string' } } },
  })
  @ApiForbiddenResponse({
    description: 'FORBIDDEN: tampered or expired link; RELEASE_NOT_ENTITLED: the licence may not (or no longer) have this release',
    type: ErrorResponseDto,
  })
  @ApiParam({ name: 'filename', description: "the artifact's filename (for the saved file's name; the token alone decides)" })
  async download(@Param('token') token: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const { source, artifact, range } = await this.updates.download(token, req.headers.range, req.method === 'GET');
    // docs/releases.md, Download links: past the end is 416 with the size (so `curl -C -` stops), on either storage.
    if (!source) {
      res.status(416).setHeader('Content-Range', `bytes */${artifact.size}`);
      return void res.end();
    }
    if (source.kind === 'redirect') return res.redirect(302, source.url);
    res.setHeader('Content-Disposition', `attachment; filename="${artifact.filename}"`);
    if (source.kind === 'stream') {
      res.status(200).setHeader('Content-Type', 'application/octet-stream');
      res.setHeader('Content-Length', String(artifact.size));
      // A client that goes away, or a store that fails mid-way, ends the response; nothing is left to answer.
      await pipeline(source.body, res).catch(() => undefined);
      return;
    }
    // A Range this server ignores (malformed, several ranges) must not reach the file sender, which reads it its own way.
    if (range.kind === 'whole') delete req.headers.range;
    await new Promise<void>((resolve, reject) =>
      res.sendFile(
        source.path,
        {
          acceptRanges: true,
          cacheControl: false,
          lastModified: false,
          etag: false,
          headers: { 'Content-Type': 'application/octet-stream' },
        },
        (err) => {
          if (!err) return resolve();
          if (res.headersSent) return resolve();
          reject(AppError.notFound('Artifact file'));
        },
      ),
    );
  }
}
