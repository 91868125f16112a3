import { Injectable } from '@nestjs/common';
import { ALL_PRODUCTS, type Actor, type ProductScope } from '../common/auth/actor';
import { AppError, type FieldError } from '../common/errors/app-error';
import { KeyringService } from '../keyring/keyring.service';
import type { Product } from '../products/product.entity';
import { relayPoolStatus, RelayPoolsService } from '../licenses/seats/relay-pools.service';
import type { RelayPool } from '../licenses/seats/relay-pool.entity';
import { armorJson, dearmorJson, Pool, POOL_FILE_LABEL, POOL_REQUEST_LABEL, relayKeyIdOf } from '../relay/pool-file';
import { SigningService } from '../signing/signing.service';
import { CreateRelayPoolDto, DEFAULT_POOL_TTL_DAYS, MAX_POOL_SEATS, RelayPoolDto, RelayPoolIssuedDto } from './dto/relay-pool.dto';
import { buildLicensePayload } from './license-payload';

const FINGERPRINT = /^sha256:[0-9a-f]{64}$/;
const MAX_KEY_LENGTH = 64;

/** A pool request's JSON, checked field by field (names prefixed `request.`, as for an air-gapped activation). */
export function parsePoolRequest(text: string): {
  licenseKey: string;
  relayFingerprint: string;
  relayPublicKey: string;
  relayKeyId: string;
  seats: number;
} {
  const armored = dearmorJson(POOL_REQUEST_LABEL, text);
  if (!armored.ok) throw AppError.field('request', `request ${armored.message}`);
  const r = armored.value;
  const problems: FieldError[] = [];
  const key = typeof r.license_key === 'string' ? r.license_key.trim().toUpperCase() : '';
  if (key === '' || key.length > MAX_KEY_LENGTH)
    problems.push({ field: 'request.license_key', message: 'license_key must be a licence key' });
  const fingerprint = typeof r.relay_fingerprint === 'string' ? r.relay_fingerprint.toLowerCase() : '';
  if (!FINGERPRINT.test(fingerprint))
    problems.push({ field: 'request.relay_fingerprint', message: 'relay_fingerprint must match ^sha256:[0-9a-f]{64}$' });
  const keyId = relayKeyIdOf(r.relay_public_key);
  if (!keyId) problems.push({ field: 'request.relay_public_key', message: 'relay_public_key must be an Ed25519 public key (SPKI PEM)' });
  const seats = r.seats;
  if (typeof seats !== 'number' || !Number.isInteger(seats) || seats < 1 || seats > MAX_POOL_SEATS)
    problems.push({ field: 'request.seats', message: `seats must be an integer from 1 to ${MAX_POOL_SEATS}` });
  if (problems.length) throw AppError.validation(problems);
  return {
    licenseKey: key,
    relayFingerprint: fingerprint,
    relayPublicKey: r.relay_public_key as string,
    relayKeyId: keyId!,
    seats: seats as number,
  };
}

export function toRelayPoolDto(pool: RelayPool, now = new Date()): RelayPoolDto {
  return {
    pool_id: pool.id,
    seats: pool.seats,
    status: relayPoolStatus(pool, now),
    relay_key_id: pool.relayKeyId,
    relay_fingerprint: pool.relayFingerprint,
    issued_at: pool.issuedAt.toISOString(),
    expires_at: pool.expiresAt.toISOString(),
    ended_at: pool.endedAt?.toISOString() ?? null,
  };
}

/**
 * Issuing a relay's pool (docs/relay.md, Issuing a pool): the request is parsed strictly, the seats held under the
 * licence lock with their event (RelayPoolsService), and after commit the pool is signed with the active key: its
 * licence payload is the one /activate builds, issued to the relay's machine.
 */
@Injectable()
export class RelayPoolIssuer {
  constructor(
    private readonly pools: RelayPoolsService,
    private readonly keyring: KeyringService,
    private readonly signing: SigningService,
  ) {}

  async issue(body: CreateRelayPoolDto, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<RelayPoolIssuedDto> {
    const request = parsePoolRequest(body.request);
    const { license, pool: held } = await this.pools.holdPool(
      { ...request, seats: body.seats ?? request.seats, ttlDays: body.ttl_days ?? DEFAULT_POOL_TTL_DAYS },
      actor,
      products,
    );
    const key = this.keyring.activeKey();
    const payload = buildLicensePayload(
      license,
      license.product as Product,
      { machineFingerprint: held.relayFingerprint, activatedAt: held.issuedAt },
      key.keyId,
      new Date(),
    );
    const pool: Pool = {
      pool_id: held.id,
      license: { ...payload },
      seats: held.seats,
      relay_public_key: held.relayPublicKey,
      relay_key_id: held.relayKeyId,
      issued_at: held.issuedAt.toISOString(),
      expires_at: held.expiresAt.toISOString(),
    };
    const { envelope } = await this.signing.signWithEnvelope(pool, key);
    return { pool_id: pool.pool_id, pool_file: armorJson(POOL_FILE_LABEL, { pool, envelope }), expires_at: pool.expires_at };
  }

  async list(licenseId: number, products: ProductScope): Promise<RelayPoolDto[]> {
    const now = new Date();
    return (await this.pools.listPools(licenseId, products)).map((p) => toRelayPoolDto(p, now));
  }

  async end(licenseId: number, poolId: string, actor: Actor, products: ProductScope): Promise<RelayPoolDto> {
    return toRelayPoolDto(await this.pools.endPool(licenseId, poolId, actor, products));
  }
}
