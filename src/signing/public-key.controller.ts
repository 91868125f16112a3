import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { SigningService } from './signing.service';

export class PublicKeyDto {
  @ApiProperty({ example: 'RSA-SHA256' }) algorithm: 'RSA-SHA256';
  @ApiProperty({ example: '3f9a1c0b7d2e4f65', description: 'First 16 hex chars of SHA-256 over the DER SubjectPublicKeyInfo' })
  key_id: string;
  @ApiProperty({ example: '-----BEGIN PUBLIC KEY-----\n...\n-----END PUBLIC KEY-----\n' }) public_key_pem: string;
}

@ApiTags('client')
@Controller('api/v1/public-key')
export class PublicKeyController {
  constructor(private readonly signing: SigningService) {}

  @Get()
  @ApiOperation({ summary: 'The public key that verifies licence signatures' })
  @ApiOkResponse({ type: PublicKeyDto })
  get(): PublicKeyDto {
    return { algorithm: 'RSA-SHA256', key_id: this.signing.keyId, public_key_pem: this.signing.publicKeyPem };
  }
}
