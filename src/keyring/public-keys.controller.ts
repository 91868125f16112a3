import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { KeyringService } from './keyring.service';
import { JwkSetDto, PublicKeyDto, PublishedKeyDto, PublishedKeysDto } from './dto/signing-key.dto';

/** The keys that verify signatures (no auth), served from each instance's memory: they answer even while the database is down. */
@ApiTags('client')
@Controller()
export class PublicKeysController {
  constructor(private readonly keyring: KeyringService) {}

  @Get('api/v1/public-key')
  @ApiOperation({ summary: 'The active public key (the one that signs now)' })
  @ApiOkResponse({ type: PublicKeyDto })
  activeKey(): PublicKeyDto {
    const key = this.keyring.activeKey();
    return { algorithm: key.algorithm, key_id: key.keyId, public_key_pem: key.publicKeyPem };
  }

  @Get('api/v1/public-keys')
  @ApiOperation({
    summary: 'Every key: the active one, the retired ones that still verify what they signed, and the revoked ones clients must drop',
  })
  @ApiOkResponse({ type: PublishedKeysDto })
  publishedKeys(): PublishedKeysDto {
    return { keys: this.keyring.publishedKeys().map((key) => PublishedKeyDto.from(key)) };
  }

  @Get('.well-known/jwks.json')
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary:
      'The keys that verify today (active and retired, never revoked) as an RFC 7517 JWK Set (kid = key_id; RSA with alg RS256, OKP/Ed25519 with alg EdDSA), with status and endorsements',
  })
  @ApiOkResponse({ type: JwkSetDto })
  jwks(): JwkSetDto {
    return { keys: this.keyring.jwks() };
  }
}
