import { ApiProperty } from '@nestjs/swagger';

export class PublicKeyDto {
  @ApiProperty({ enum: ['RSA-SHA256'], example: 'RSA-SHA256' }) algorithm: 'RSA-SHA256';
  @ApiProperty({
    pattern: '^[0-9a-f]{16}$',
    example: '3f9a1c0b7d2e4f65',
    description: 'First 16 hex chars of SHA-256 over the DER SubjectPublicKeyInfo',
  })
  key_id: string;
  @ApiProperty({ example: '-----BEGIN PUBLIC KEY-----\n...\n-----END PUBLIC KEY-----\n' }) public_key_pem: string;
}
