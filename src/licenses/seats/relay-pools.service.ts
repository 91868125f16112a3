import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ALL_PRODUCTS, type Actor, type ProductScope } from '../../common/auth/actor';
import { AppError } from '../../common/errors/app-error';
import { ErrorCode } from '../../common/errors/error-codes';
import { EventRecorder } from '../../events/event-recorder';
import type { License } from '../license.entity';
import { licenseEvent } from '../license-details';
import { LicensesRepository } from '../licenses.repository';
import type { Activation } from './activation.entity';
import { decideRelayPool } from './relay-pool-decisions';
import type { RelayPool } from './relay-pool.entity';
import { poolChanges, poolFromRow, RelayPoolRow, RelayPoolsRepository } from './relay-pools.repository';
import { invalidKey } from './seat-decisions';
import { SeatsRepository } from './seats.repository';

/** What a relay asks for, already parsed and checked (docs/relay.md, Issuing a pool). */
export interface RelayPoolHold {
  licenseKey: string;
  relayFingerprint: string;
  relayPublicKey: string;
  relayKeyId: string;
  seats: number;
  ttlDays: number;
}

/** A pool just held, with the licence (product loaded) and its bound seats at that moment, for the pool file's payload. */
export interface HeldPool {
  license: License;
  pool: RelayPool;
  /** The pool of the same relay key this one replaced, if any. */
  replacedPoolId: string | null;
}

export type RelayPoolStatus = 'active' | 'expired' | 'ended' | 'replaced';

/** A pool's state at `now`: ended (by staff) or replaced (by a newer request of its relay), else active until it expires. */
export function relayPoolStatus(pool: RelayPool, now: Date): RelayPoolStatus {
  if (pool.endedAt) return pool.endReason ?? 'ended';
  return pool.expiresAt > now ? 'active' : 'expired';
}

/**
 * Relay pools on the vendor's side (docs/relay.md, Seats on the vendor's side): a pool holds seats of the licence's
 * `max_installations` while it is valid. Every change takes the licence lock and moves its seat counter, exactly as a
 * locked activation does (SeatsRepository.loadForSeatChange), and activations count the pools' seats in the same load,
 * so a pool and an activation can never both take the last seat.
 */
@Injectable()
export class RelayPoolsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly licenses: LicensesRepository,
    private readonly seats: SeatsRepository,
    private readonly pools: RelayPoolsRepository,
    private readonly events: EventRecorder,
  ) {}

  /**
   * Holds `seats` for the relay, replacing its open pool (whose seats then stop counting), in decideRelayPool's order.
   * The pool and its `license.relay_pool_issued` event commit in one statement. A licence outside `products` is as
   * unknown as a wrong key.
   */
  async holdPool(hold: RelayPoolHold, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<HeldPool> {
    return this.dataSource.transaction(async (manager) => {
      const load = await this.seats.loadForSeatChange(hold.licenseKey, manager, true);
      if (!load || (products !== null && !products.includes(load.license.productId))) throw invalidKey();
      const { license, seats, now } = load;
      const replaced = await this.pools.openPoolOf(license.id, hold.relayKeyId, manager);
      const stillHeld = replaced && replaced.expiresAt > now ? replaced.seats : 0;
      const decision = decideRelayPool(license, seats, load.pooledSeats - stillHeld, hold.seats, hold.ttlDays, now);
      if (decision.kind === 'deny') throw decision.error;
      const pool: RelayPool = {
        id: randomUUID(),
        licenseId: license.id,
        seats: hold.seats,
        relayKeyId: hold.relayKeyId,
        relayPublicKey: hold.relayPublicKey,
        relayFingerprint: hold.relayFingerprint,
        issuedAt: now,
        expiresAt: decision.expiresAt,
        endedAt: null,
        endReason: null,
      };
      const rows = await this.events.recordWith<RelayPoolRow>(manager, poolChanges.issue(pool), [
        licenseEvent('license.relay_pool_issued', actor, license, {
          seats: liveSeats(seats),
          now,
          details: {
            pool_id: pool.id,
            seats: pool.seats,
            relay_key_id: pool.relayKeyId,
            relay_fingerprint: pool.relayFingerprint,
            issued_at: pool.issuedAt.toISOString(),
            expires_at: pool.expiresAt.toISOString(),
            replaced_pool_id: replaced?.id ?? null,
          },
        }),
      ]);
      return { license, pool: poolFromRow(rows[0]), replacedPoolId: replaced?.id ?? null };
    });
  }

  /** The licence's pools, newest first; 404 NOT_FOUND for a licence outside `products` or none. */
  async listPools(licenseId: number, products: ProductScope = ALL_PRODUCTS): Promise<RelayPool[]> {
    if (!(await this.licenses.getById(licenseId, undefined, products))) throw AppError.notFound('License');
    return this.pools.listForLicense(licenseId);
  }

  /**
   * Ends a pool now: its seats return at once on this side (the relay, offline, lends them until the pool's
   * expires_at). 404 for an unknown licence or pool, 409 CONFLICT for a pool already ended or replaced.
   */
  async endPool(licenseId: number, poolId: string, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<RelayPool> {
    return this.dataSource.transaction(async (manager) => {
      const found = await this.licenses.getById(licenseId, manager, products);
      if (!found) throw AppError.notFound('License');
      const load = await this.seats.loadForSeatChange(found.licenseKey, manager, true);
      if (!load) throw AppError.notFound('License');
      const pool = await this.pools.getForLicense(licenseId, poolId, manager);
      if (!pool) throw AppError.notFound('Relay pool');
      if (pool.endedAt) throw new AppError(ErrorCode.CONFLICT, 409, `The relay pool was already ${pool.endReason ?? 'ended'}`);
      const { license, seats, now } = load;
      const rows = await this.events.recordWith<RelayPoolRow>(manager, poolChanges.end(pool.id, 'ended'), [
        licenseEvent('license.relay_pool_ended', actor, license, {
          seats: liveSeats(seats),
          now,
          details: { pool_id: pool.id, seats: pool.seats, relay_key_id: pool.relayKeyId, expires_at: pool.expiresAt.toISOString() },
        }),
      ]);
      if (!rows[0]) throw new AppError(ErrorCode.CONFLICT, 409, 'The relay pool was already ended');
      return poolFromRow(rows[0]);
    });
  }
}

const liveSeats = (seats: Activation[]) => seats.filter((s) => s.releasedAt === null);
