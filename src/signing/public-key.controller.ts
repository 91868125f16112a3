import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { PublicKeyDto } from './dto/public-key.dto';
import { SigningService } from './signing.service';

@ApiTags('client')
@Controller('api/v1/public-key')
export class PublicKeyController {
  constructor(private readonly signing: SigningService) {}

  @Get()
  @ApiOperation({
    summary: 'The public key that verifies licence signatures',
    description: 'PEM (SubjectPublicKeyInfo) of the RSA-2048 key; key_id matches license.key_id of the signed payload.',
  })
  @ApiOkResponse({ type: PublicKeyDto })
  get(): PublicKeyDto {
    return { algorithm: 'RSA-SHA256', key_id: this.signing.keyId, public_key_pem: this.signing.publicKeyPem };
  }
}
