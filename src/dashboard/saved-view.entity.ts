import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { TimestampColumn } from '../common/timestamp-column';

/**
 * A saved view of the licence list (docs/dashboard.md, Saved views), shared by every staff member: its name and the
 * list's query string (filters, sort, page size). Written and read by SQL only (saved-views.repository.ts).
 */
@Entity('saved_views')
@Index('saved_views_name_key', ['name'], { unique: true })
export class SavedView {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'saved_views_pkey' })
  id: number;

  @Column({ type: 'varchar', length: 80 })
  name: string;

  @Column({ type: 'varchar', length: 2000 })
  query: string;

  /** The dashboard user who saved it last. */
  @Column({ type: 'varchar', length: 64 })
  author: string;

  @TimestampColumn('updated_at', { default: () => 'now()' })
  updatedAt: Date;
}
