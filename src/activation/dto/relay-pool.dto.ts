import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { MAX_ARMOR_LENGTH } from '../../relay/pool-file';
import { MaxChars, MinChars } from '../../common/validation/validators';

/** The most seats one pool may hold (a licence's max_installations bounds it anyway). */
export const MAX_POOL_SEATS = 100_000;
export const MAX_POOL_TTL_DAYS = 365;
export const DEFAULT_POOL_TTL_DAYS = 30;

/** `POST /api/v1/admin/relay-pools` (docs/relay.md, Issuing a pool). */
export class CreateRelayPoolDto {
  @ApiProperty({
    minLength: 1,
    maxLength: MAX_ARMOR_LENGTH,
    example: '-----BEGIN RELAY POOL REQUEST-----\neyJsaWNlbnNlX2tleSI6...\n-----END RELAY POOL REQUEST-----\n',
    description:
      'What `relay init` printed: base64 of {license_key, relay_fingerprint, relay_public_key (SPKI PEM, Ed25519), seats} between the markers',
  })
  @IsString()
  @MinChars(1)
  @MaxChars(MAX_ARMOR_LENGTH)
  request: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_POOL_SEATS,
    description: "Seats to lend; default the request's `seats`",
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_POOL_SEATS)
  seats?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_POOL_TTL_DAYS,
    default: DEFAULT_POOL_TTL_DAYS,
    description: "Days the pool is valid (never past the end of the licence's grace period)",
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_POOL_TTL_DAYS)
  ttl_days?: number;
}

/** The pool file for the relay. */
export class RelayPoolIssuedDto {
  @ApiProperty({ format: 'uuid' })
  pool_id: string;

  @ApiProperty({
    example: '-----BEGIN RELAY POOL-----\neyJwb29sIjp7...\n-----END RELAY POOL-----\n',
    description:
      'Armored base64 (64-character lines) of {pool: {pool_id, license, seats, relay_public_key, relay_key_id, issued_at, expires_at}, envelope}; the envelope is signed by the active key over the JCS bytes of `pool`',
  })
  pool_file: string;

  @ApiProperty({ format: 'date-time' })
  expires_at: string;
}

/** One pool of a licence, as the list shows it. */
export class RelayPoolDto {
  @ApiProperty({ format: 'uuid' })
  pool_id: string;

  @ApiProperty({ type: 'integer' })
  seats: number;

  @ApiProperty({ enum: ['active', 'expired', 'ended', 'replaced'], description: 'Only an active pool holds seats' })
  status: 'active' | 'expired' | 'ended' | 'replaced';

  @ApiProperty({ example: '8d33d2f9e61cebf3' })
  relay_key_id: string;

  @ApiProperty({ example: 'sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210' })
  relay_fingerprint: string;

  @ApiProperty({ format: 'date-time' })
  issued_at: string;

  @ApiProperty({ format: 'date-time' })
  expires_at: string;

  @ApiProperty({ format: 'date-time', nullable: true, type: String })
  ended_at: string | null;
}
