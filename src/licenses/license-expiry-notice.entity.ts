import { Check, Entity, PrimaryColumn } from 'typeorm';
import { TimestampColumn } from '../common/timestamp-column';

export type ExpiryKind = 'expiring_soon' | 'expired';

/** Time-driven events already told: one row per licence, kind and expiry date, so each fires once (docs/webhooks.md, Event catalogue). */
@Entity('license_expiry_notices')
@Check('license_expiry_notices_kind_check', `kind IN ('expiring_soon', 'expired')`)
export class LicenseExpiryNotice {
  @PrimaryColumn({ name: 'license_id', type: 'int', primaryKeyConstraintName: 'license_expiry_notices_pkey' })
  licenseId: number;

  @PrimaryColumn({ type: 'varchar', length: 16, primaryKeyConstraintName: 'license_expiry_notices_pkey' })
  kind: ExpiryKind;

  @PrimaryColumn({ name: 'expires_at', type: 'timestamptz', primaryKeyConstraintName: 'license_expiry_notices_pkey' })
  expiresAt: Date;

  @TimestampColumn('created_at', { default: () => 'now()' })
  createdAt: Date;
}
