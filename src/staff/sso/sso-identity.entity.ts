import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { TimestampColumn } from '../../common/timestamp-column';

/** The OpenID identity (issuer + sub) of a single sign-on staff account (docs/dashboard.md, Single sign-on). */
@Entity('staff_sso_identities')
@Index('staff_sso_identities_issuer_subject_key', ['issuer', 'subject'], { unique: true })
@Index('staff_sso_identities_user_key', ['userId'], { unique: true })
export class StaffSsoIdentity {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'staff_sso_identities_pkey' })
  id: number;

  @Column({ name: 'user_id', type: 'integer' })
  userId: number;

  @Column({ type: 'varchar', length: 512 })
  issuer: string;

  @Column({ type: 'varchar', length: 255 })
  subject: string;

  @TimestampColumn('created_at', { default: () => 'now()' })
  createdAt: Date;
}
