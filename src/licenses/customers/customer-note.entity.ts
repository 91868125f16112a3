import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { TimestampColumn } from '../../common/timestamp-column';

/**
 * A staff note about a customer (docs/dashboard.md, A customer's page). `customer` is the customer's identity:
 * `email:` and the lower-cased address, or `pib:` and the PIB.
 */
@Entity('customer_notes')
@Index('customer_notes_customer_idx', ['customer', 'id'])
export class CustomerNote {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'customer_notes_pkey' })
  id: string;

  @Column({ type: 'varchar', length: 300 })
  customer: string;

  @Column({ type: 'varchar', length: 2000 })
  body: string;

  /** The dashboard user who wrote it. */
  @Column({ type: 'varchar', length: 64 })
  author: string;

  @TimestampColumn('created_at', { default: () => 'now()' })
  createdAt: Date;
}
