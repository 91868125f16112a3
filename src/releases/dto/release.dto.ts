import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { IsIn, IsString, registerDecorator, ValidateIf } from 'class-validator';
import { ValidateRequestDto } from '../../activation/dto/client-requests.dto';
import { SignedEnvelopeDto } from '../../activation/dto/client-responses.dto';
import { FeatureListInput, IsOptionalNotNull, IsStorableText, MaxChars } from '../../common/validation/validators';
import { isSemVer } from '../release-rules';
import { Release, RELEASE_CHANNELS, ReleaseArtifact, type ReleaseChannel } from '../release.entities';
import { apiFields, apiObject, apiTimes } from '../../common/http/api-fields';

/** SemVer 2.0 exactly (docs/releases.md, Versions): no leading v, no spaces, at most 256 characters. */
function IsSemVer(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isSemVer',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => isSemVer(value),
        defaultMessage: (args) => `${args?.property} must be a SemVer 2.0 version such as 1.4.0 or 2.0.0-beta.1`,
      },
    });
}

export class CreateReleaseDto {
  @ApiProperty({ example: '1.4.0', maxLength: 256, description: 'SemVer 2.0; unique within the product' })
  @IsSemVer()
  version: string;

  @ApiPropertyOptional({ enum: RELEASE_CHANNELS, description: 'default stable' })
  @IsOptionalNotNull()
  @IsIn(RELEASE_CHANNELS)
  channel?: ReleaseChannel;

  @ApiPropertyOptional({ example: 'Faster receipts; fixes the printer timeout.', maxLength: 20000 })
  @IsOptionalNotNull()
  @IsString()
  @MaxChars(20000)
  @IsStorableText()
  notes?: string;

  @FeatureListInput({ example: ['REPORTS'], description: 'a licence must carry every one of them to download' })
  required_features?: string[];
}

export class ArtifactDto {
  @ApiProperty({ example: 'Till-Setup-1.4.0.exe' }) filename: string;
  @ApiProperty({ example: 'win32', description: "Node's platform name: linux, darwin, win32" }) platform: string;
  @ApiProperty({ example: 'x64', description: "Node's arch name: x64, arm64, ia32, arm" }) arch: string;
  @ApiProperty({ type: 'integer', example: 73400320 }) size: number;
  @ApiProperty({ example: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', description: 'hex' }) sha256: string;
  @ApiProperty({ description: 'hex' }) sha512: string;

  static from(a: ReleaseArtifact): ArtifactDto {
    return apiFields(a, 'filename', 'platform', 'arch', 'size', 'sha256', 'sha512');
  }
}

export class ReleaseArtifactDto extends ArtifactDto {
  @ApiProperty({ type: String, nullable: true, description: 'the updater signature uploaded in X-Artifact-Signature; null: none' })
  signature: string | null;
  @ApiProperty({ format: 'date-time' }) uploaded_at: string;
}

export class ReleaseDto {
  @ApiProperty({ type: 'integer', example: 1 }) id: number;
  @ApiProperty({ example: 'POS_RETAIL' }) product: string;
  @ApiProperty({ example: '1.4.0' }) version: string;
  @ApiProperty({ enum: RELEASE_CHANNELS }) channel: ReleaseChannel;
  @ApiProperty() notes: string;
  @ApiProperty({ type: [String] }) required_features: string[];
  @ApiProperty({ enum: ['draft', 'published', 'yanked'] }) state: 'draft' | 'published' | 'yanked';
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) published_at: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) yanked_at: string | null;
  @ApiProperty({ type: [ReleaseArtifactDto] }) artifacts: ReleaseArtifactDto[];
  @ApiProperty({ type: 'integer', description: 'downloads through signed links (a ranged request counts only when it starts at byte 0)' })
  downloads: number;

  static from(r: Release, productCode: string, downloads: number): ReleaseDto {
    return apiObject(
      apiFields(r, 'id'),
      { product: productCode },
      apiFields(r, 'version', 'channel', 'notes', 'requiredFeatures'),
      { state: r.yankedAt ? 'yanked' : r.publishedAt ? 'published' : 'draft' },
      apiTimes(r, 'createdAt', 'publishedAt', 'yankedAt'),
      {
        artifacts: (r.artifacts ?? []).map((a) =>
          apiObject(ArtifactDto.from(a), { signature: a.signature, uploaded_at: a.createdAt.toISOString() }),
        ),
        downloads,
      },
    );
  }
}

export class DownloadDayDto {
  @ApiProperty({ example: '2026-11-28' }) day: string;
  @ApiProperty({ type: 'integer' }) downloads: number;
}

export class ReleaseDownloadsDto {
  @ApiProperty({ type: 'integer' }) release_id: number;
  @ApiProperty() version: string;
  @ApiProperty({ type: 'integer' }) downloads: number;
  @ApiProperty({ type: [DownloadDayDto], description: 'the last 30 UTC days with downloads' }) days: DownloadDayDto[];
}

/** The update check (docs/releases.md, Checking for updates): a seat, what runs there, and the optional nonce and envelope. */
export class ReleaseCheckRequestDto extends ValidateRequestDto {
  @ApiPropertyOptional({ example: 'POS_RETAIL', description: 'PRODUCT_MISMATCH when the licence is for another product' })
  @ValidateIf((body: { product?: unknown }) => body.product !== undefined)
  @IsString()
  @MaxChars(32)
  product?: string;

  @ApiPropertyOptional({ enum: RELEASE_CHANNELS, description: 'default stable; a channel also gets the more stable ones' })
  @ValidateIf((body: { channel?: unknown }) => body.channel !== undefined)
  @IsIn(RELEASE_CHANNELS)
  channel?: ReleaseChannel;

  @ApiProperty({ example: 'win32', description: "Node's platform name" })
  @IsString()
  @MaxChars(16)
  platform: string;

  @ApiPropertyOptional({ example: 'x64', description: "Node's arch name; absent: any" })
  @ValidateIf((body: { arch?: unknown }) => body.arch !== undefined)
  @IsString()
  @MaxChars(16)
  arch?: string;

  @ApiProperty({ example: '1.3.2', description: 'the running version (SemVer 2.0)' })
  @IsSemVer()
  current_version: string;
}

export class UpdateArtifactDto extends ArtifactDto {
  @ApiProperty({ description: 'signed download link; GET it (Range supported), no credential' }) url: string;
  @ApiProperty({ format: 'date-time' }) url_expires_at: string;
}

/** The offered release; its schema is written inline on ReleaseCheckResponseDto.update (nullable). */
export class UpdateDto {
  version: string;
  channel: ReleaseChannel;
  notes: string;
  published_at: string;
  artifacts: UpdateArtifactDto[];
}

export class ReleaseCheckResponseDto {
  // Inline, not a $ref: OpenAPI 3.0 can make only a typed schema nullable.
  @ApiProperty({
    type: 'object',
    nullable: true,
    description: 'the newest entitled release above current_version; null: none',
    required: ['version', 'channel', 'notes', 'published_at', 'artifacts'],
    properties: {
      version: { type: 'string', example: '1.4.0' },
      channel: { type: 'string', enum: [...RELEASE_CHANNELS] },
      notes: { type: 'string' },
      published_at: { type: 'string', format: 'date-time' },
      artifacts: { type: 'array', items: { $ref: getSchemaPath(UpdateArtifactDto) } },
    },
  })
  update: UpdateDto | null;
  @ApiPropertyOptional({ description: 'with a nonce (as validate): echoed' }) nonce?: string;
  @ApiPropertyOptional() license_key?: string;
  @ApiPropertyOptional() machine_fingerprint?: string;
  @ApiPropertyOptional({ format: 'date-time' }) checked_at?: string;
  @ApiPropertyOptional() key_id?: string;
  @ApiPropertyOptional({ description: 'RSA-SHA256: (or Ed25519:) + base64 over the JCS form of the answer without signature and envelope' })
  signature?: string;
  @ApiPropertyOptional({ type: SignedEnvelopeDto, description: 'with a nonce and envelope: true (docs/signing.md, Envelopes)' })
  envelope?: SignedEnvelopeDto;
}

export class TauriUpdateDto {
  @ApiProperty({ example: '1.4.0' }) version: string;
  @ApiProperty() notes: string;
  @ApiProperty({ format: 'date-time' }) pub_date: string;
  @ApiProperty({ description: 'signed download link' }) url: string;
  @ApiProperty({ description: 'the signature uploaded with the artifact (X-Artifact-Signature)' }) signature: string;
}
