import { MigrationInterface, QueryRunner } from 'typeorm';
import { sqlFunction } from '../sql-functions';

/**
 * Relay pools (docs/relay.md): the seats of a licence lent, offline, to a relay on a customer's network. A pool holds
 * its seats while it is not ended and not expired; at most one open pool per licence and relay key (a new request
 * from that relay replaces it). license_for_seat_change v5 returns the seats held by the licence's valid pools, so
 * every seat change counts them (docs/relay.md, Seats on the vendor's side).
 */
export class RelayPools1797190000000 implements MigrationInterface {
  name = 'RelayPools1797190000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE relay_pools (
        id uuid NOT NULL CONSTRAINT relay_pools_pkey PRIMARY KEY,
        license_id int NOT NULL CONSTRAINT relay_pools_license_fkey REFERENCES licenses(id) ON DELETE CASCADE,
        seats int NOT NULL,
        relay_key_id varchar(16) NOT NULL,
        relay_public_key varchar(1024) NOT NULL,
        relay_fingerprint varchar(71) NOT NULL,
        issued_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        ended_at timestamptz,
        end_reason varchar(16),
        CONSTRAINT relay_pools_seats_check CHECK (seats >= 1),
        CONSTRAINT relay_pools_end_reason_check CHECK (end_reason IN ('ended', 'replaced'))
      )`);
    await q.query(`CREATE INDEX relay_pools_license_idx ON relay_pools (license_id, issued_at)`);
    await q.query(`CREATE UNIQUE INDEX relay_pools_open_key ON relay_pools (license_id, relay_key_id) WHERE ended_at IS NULL`);
    await q.query(sqlFunction('license_for_seat_change.v5'));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(sqlFunction('license_for_seat_change.v4'));
    await q.query(`DROP TABLE relay_pools`);
  }
}
