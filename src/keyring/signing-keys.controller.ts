import { Body, Controller, Get, HttpCode, Injectable, Param, PipeTransform, Post, Res, UseInterceptors } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiBadRequestResponse,
  ApiBody,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { AdminRoute } from '../common/auth/admin-route.decorator';
import { Actor, CurrentActor } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import { AbsentBodyAsEmpty } from '../common/http/empty-body';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { setTotalCount, TOTAL_COUNT_HEADERS } from '../common/http/page-query.dto';
import { AddEndorsementDto, RevokeSigningKeyDto, RotateSigningKeyDto, SigningKeyDto } from './dto/signing-key.dto';
import { KeyringService } from './keyring.service';

/** A key_id in a path: 16 hex digits (upper case accepted), else 400 naming key_id. */
@Injectable()
export class KeyIdParamPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!/^[0-9a-fA-F]{16}$/.test(value)) throw AppError.field('key_id', 'key_id must be 16 hex digits');
    return value.toLowerCase();
  }
}

@ApiTags('admin: signing keys')
@AdminRoute('signing-keys:manage')
@Controller('api/v1/admin/signing-keys')
export class SigningKeysController {
  constructor(private readonly keyring: KeyringService) {}

  @Get()
  @ApiOperation({ summary: 'Every signing key with its state (active, retired, revoked), newest first' })
  @ApiOkResponse({ type: [SigningKeyDto], headers: TOTAL_COUNT_HEADERS })
  async list(@Res({ passthrough: true }) res: Response): Promise<SigningKeyDto[]> {
    const keys = (await this.keyring.listKeys()).map((key) => SigningKeyDto.from(key));
    return setTotalCount(res, { items: keys, total: keys.length });
  }

  @Post('rotate')
  @HttpCode(201)
  @ApiOperation({
    summary:
      'Generate a new active key (RSA-SHA256 by default, or Ed25519); the previous active key endorses it and is retired (still published, never signs again)',
  })
  @ApiBody({ type: RotateSigningKeyDto, required: false })
  @ApiCreatedResponse({ type: SigningKeyDto, description: 'The new active key' })
  @ApiBadRequestResponse({ type: ErrorResponseDto, description: 'VALIDATION_ERROR: an unknown algorithm' })
  // No body at all rotates to RSA-SHA256, as before the route took one.
  @UseInterceptors(AbsentBodyAsEmpty)
  async rotate(@Body() body: RotateSigningKeyDto, @CurrentActor() actor: Actor): Promise<SigningKeyDto> {
    return SigningKeyDto.from(await this.keyring.rotate(actor, body.algorithm));
  }

  @Post(':key_id/endorsements')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Store an endorsement of a key made offline (scripts/endorse-key.ts) by another key, e.g. an offline root key',
  })
  @ApiParam({ name: 'key_id', schema: { type: 'string', pattern: '^[0-9a-f]{16}$' }, description: '16 hex digits' })
  @ApiCreatedResponse({ type: SigningKeyDto, description: 'The key with its endorsements' })
  @ApiBadRequestResponse({
    type: ErrorResponseDto,
    description: 'VALIDATION_ERROR: not a PEM public key, the key itself, or a signature that is not its endorsement of this key',
  })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'NOT_FOUND: no such key' })
  @ApiConflictResponse({ type: ErrorResponseDto, description: 'ALREADY_REVOKED: a revoked key is not endorsed' })
  async endorse(
    @Param('key_id', KeyIdParamPipe) keyId: string,
    @Body() body: AddEndorsementDto,
    @CurrentActor() actor: Actor,
  ): Promise<SigningKeyDto> {
    return SigningKeyDto.from(await this.keyring.endorse(keyId, { publicKeyPem: body.public_key_pem, signature: body.signature }, actor));
  }

  @Post(':key_id/revoke')
  @HttpCode(200)
  @ApiOperation({ summary: 'Withdraw a retired key: no longer published, so what it signed no longer verifies' })
  @ApiParam({ name: 'key_id', schema: { type: 'string', pattern: '^[0-9a-f]{16}$' }, description: '16 hex digits' })
  @ApiOkResponse({ type: SigningKeyDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'NOT_FOUND: no such key' })
  @ApiConflictResponse({ type: ErrorResponseDto, description: 'CONFLICT: the active key cannot be revoked; ALREADY_REVOKED' })
  async revoke(
    @Param('key_id', KeyIdParamPipe) keyId: string,
    @Body() body: RevokeSigningKeyDto,
    @CurrentActor() actor: Actor,
  ): Promise<SigningKeyDto> {
    return SigningKeyDto.from(await this.keyring.revoke(keyId, actor, body?.reason));
  }
}
