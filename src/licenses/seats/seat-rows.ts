import type { PolicyOverrides, SeatPolicy } from '../../common/seat-policy/license-policy';
import type { License } from '../license.entity';
import { rowShape, type RowOf } from '../../database/row-shape';
import { CATALOG_ROWS, LICENSE_ROWS, type LicenseRow, type ProductRow } from '../license-rows';
import type { StoredUsage } from '../usage/usage-decisions';
import { Activation } from './activation.entity';

/*
 * The seats' rows and their targets (docs/architecture.md, Database style), for SeatsRepository and the seat changes
 * the recorder runs.
 */

/** A seat the sweep released. */
export interface SweptSeat {
  id: string;
  machine_fingerprint: string;
  last_seen_at: Date;
  license_id: number;
  product_code: string;
}

/** A heartbeat's licence status fields, merged timeout and (when it has a live seat) the refreshed seat. */
export interface HeartbeatRow {
  id: number;
  expires_at: Date | null;
  grace_days: number;
  active: boolean;
  revoked: boolean;
  heartbeat_timeout_seconds: number | null;
  seat_id: string | null;
  last_seen_at: Date | null;
}

/** Maps the rows `change` returned. */
export const seatsFromRows = (rows: ActivationRow[]) => rows.map(ACTIVATION_ROWS.fromRow);

/** What a seat change loads under the licence lock (see lockForSeatChange). */
export interface SeatChangeLoad {
  license: License;
  seats: Activation[];
  recentDeactivations: Date[];
  now: Date;
  nextSeatId: string;
  /** The licence's seat counter when read (license_seat_versions; 0 without a row): every seat bound moves it. */
  version: string;
  /** Seats held by the licence's valid relay pools (docs/relay.md, Seats on the vendor's side): taken like bound seats. */
  pooledSeats: number;
}

export type Json<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K] };

export interface SeatChangeJson {
  license: Json<LicenseRow>;
  product: Json<ProductRow>;
  seats: Json<ActivationRow>[];
  recent_deactivations: string[];
  now: string;
  next_seat_id: number;
  version: string;
  pooled_seats?: number;
}

function jsonDates<T extends object, K extends keyof T & string>(row: T, keys: K[]): Record<K, Date | null> {
  return Object.fromEntries(keys.map((k) => [k, row[k] == null ? null : new Date(row[k] as string)])) as Record<K, Date | null>;
}

export function licenseFromJson(l: Json<LicenseRow>, p: Json<ProductRow>): License {
  const license = LICENSE_ROWS.fromRow({
    ...l,
    ...(jsonDates(l, ['expires_at', 'revoked_at', 'created_at', 'updated_at']) as Pick<
      LicenseRow,
      'expires_at' | 'revoked_at' | 'created_at' | 'updated_at'
    >),
  });
  const product = CATALOG_ROWS.fromRow({ ...p, created_at: new Date(p.created_at), updated_at: new Date(p.updated_at) });
  return Object.assign(license, { product });
}

/** An activations row read into an Activation; its bigint id comes as text (as a number through json). */
export const ACTIVATION_ROWS = rowShape(
  () => new Activation(),
  'id, license_id, product_id, machine_fingerprint, hostname, os, app_version, ip, activated_at, last_seen_at, released_at, release_reason',
  { convert: { id: (id: string | number) => String(id) } },
);

export const SEAT_COLUMNS = ACTIVATION_ROWS.columns;

/** An activations row as pg returns it. */
export type ActivationRow = RowOf<typeof ACTIVATION_ROWS>;

/** The licence fields that decide its status, and the checked machine's current seat (if any). */
export interface SeatCheckRow {
  license: Pick<License, 'id' | 'expiresAt' | 'graceDays' | 'active' | 'revoked' | 'productId' | 'createdAt'> & {
    productCode: string;
    /** The merged policy (docs/licences.md, Seat policies), for the usage meter. */
    policy: SeatPolicy;
  };
  seat: { id: string; stale: boolean } | null;
  /** The licence's newest usage counter (docs/licences.md, Usage metering); it counts only if it is this period's. */
  latestUsage: StoredUsage | null;
}

/** The validation check's row: licence status fields and the machine's current seat, null when it has none. */
export interface SeatCheckDbRow {
  id: number;
  expires_at: Date | null;
  grace_days: number;
  active: boolean;
  revoked: boolean;
  seat_id: string | null;
  stale: boolean | null;
  product_id: number;
  product_code: string;
  created_at: Date;
  policy: PolicyOverrides;
  default_policy: PolicyOverrides;
  usage_period_start: Date | null;
  uses: string | null;
}
