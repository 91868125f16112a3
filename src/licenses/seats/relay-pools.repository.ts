import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { plain, rowShape, type RowOf } from '../../database/row-shape';
import { raw, runStatement, sql } from '../../database/statement';
import type { RecordedChange } from '../../events/event-recorder';
import type { PoolEndReason, RelayPool } from './relay-pool.entity';

/** A relay_pools row read into a RelayPool. */
const POOL_ROWS = rowShape(
  plain<RelayPool>(),
  'id, license_id, seats, relay_key_id, relay_public_key, relay_fingerprint, issued_at, expires_at, ended_at, end_reason',
);

const POOL_COLUMNS = POOL_ROWS.columns;

/** A relay_pools row as pg returns it. */
export type RelayPoolRow = RowOf<typeof POOL_ROWS>;

export const poolFromRow = POOL_ROWS.fromRow;

/**
 * Relay pools (docs/relay.md, Seats on the vendor's side). Style: named SQL with typed rows (RelayPoolRow), mapped by
 * hand (docs/architecture.md, Database style). The seats they hold are counted by the seat change's one load
 * (SeatsRepository.loadForSeatChange), under the licence lock every pool change takes.
 */
@Injectable()
export class RelayPoolsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The licence's pools, newest first. */
  async listForLicense(licenseId: number, manager?: EntityManager): Promise<RelayPool[]> {
    const rows = await runStatement<RelayPoolRow>(
      manager ?? this.dataSource.manager,
      'relay-pools-of-license',
      sql`SELECT ${raw(POOL_COLUMNS)} FROM relay_pools WHERE license_id = ${licenseId} ORDER BY issued_at DESC, id DESC`,
    );
    return rows.map(poolFromRow);
  }

  /** The open (not ended) pool of this licence and relay key, if any: the one a new request replaces. */
  async openPoolOf(licenseId: number, relayKeyId: string, manager: EntityManager): Promise<RelayPool | null> {
    const rows = await runStatement<RelayPoolRow>(
      manager,
      'relay-pool-open-of-key',
      sql`SELECT ${raw(POOL_COLUMNS)} FROM relay_pools WHERE license_id = ${licenseId} AND relay_key_id = ${relayKeyId} AND ended_at IS NULL`,
    );
    return rows[0] ? poolFromRow(rows[0]) : null;
  }

  async getForLicense(licenseId: number, poolId: string, manager?: EntityManager): Promise<RelayPool | null> {
    const rows = await runStatement<RelayPoolRow>(
      manager ?? this.dataSource.manager,
      'relay-pool-of-license',
      sql`SELECT ${raw(POOL_COLUMNS)} FROM relay_pools WHERE license_id = ${licenseId} AND id = ${poolId}::uuid`,
    );
    return rows[0] ? poolFromRow(rows[0]) : null;
  }
}

/** The writes of pool changes, as CTEs for EventRecorder.recordWith: the change and its event are one statement. */
export const poolChanges = {
  /** Ends the relay's open pool (`replaced`, if any) and inserts the new one; `change` returns the new pool. */
  issue(pool: RelayPool): RecordedChange {
    return {
      name: 'relay-pool-issue',
      ctes: sql`replaced AS (
        UPDATE relay_pools SET ended_at = ${pool.issuedAt}::timestamptz, end_reason = 'replaced'
        WHERE license_id = ${pool.licenseId}::int AND relay_key_id = ${pool.relayKeyId}::varchar AND ended_at IS NULL RETURNING id
      ), change AS (
        INSERT INTO relay_pools (id, license_id, seats, relay_key_id, relay_public_key, relay_fingerprint, issued_at, expires_at)
        SELECT ${pool.id}::uuid, ${pool.licenseId}::int, ${pool.seats}::int, ${pool.relayKeyId}::varchar, ${pool.relayPublicKey}::varchar,
          ${pool.relayFingerprint}::varchar, ${pool.issuedAt}::timestamptz, ${pool.expiresAt}::timestamptz
        FROM (SELECT count(*) FROM replaced) AS replaced_first
        RETURNING ${raw(POOL_COLUMNS)})`,
    };
  },
  /** Ends an open pool; nothing when it was ended meanwhile. */
  end(poolId: string, reason: PoolEndReason): RecordedChange {
    return {
      name: 'relay-pool-end',
      ctes: sql`change AS (
        UPDATE relay_pools SET ended_at = now(), end_reason = ${reason}::varchar WHERE id = ${poolId}::uuid AND ended_at IS NULL
        RETURNING ${raw(POOL_COLUMNS)})`,
      eventsOnlyIf: raw('true'),
    };
  },
};
