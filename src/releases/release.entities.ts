import { Check, Column, Entity, Index, JoinColumn, ManyToOne, OneToMany, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import { TimestampColumn } from '../common/timestamp-column';
import { Product } from '../products/product.entity';

/** Update channels, most stable first: a client on a channel is offered its releases and those of the channels before it. */
export const RELEASE_CHANNELS = ['stable', 'beta', 'alpha'] as const;
export type ReleaseChannel = (typeof RELEASE_CHANNELS)[number];

/** The unique index whose violation is a duplicate version (409). */
export const RELEASE_VERSION_INDEX = 'releases_product_version_key';
export const ARTIFACT_FILENAME_INDEX = 'release_artifacts_release_filename_key';

/** A version of a product (docs/releases.md): a draft until published; yanked ones are offered to no one. */
@Entity('releases')
@Index(RELEASE_VERSION_INDEX, ['productId', 'version'], { unique: true })
@Check('releases_channel_check', `channel IN ('stable', 'beta', 'alpha')`)
@Check('releases_required_features_check', `jsonb_typeof(required_features) = 'array'`)
export class Release {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'releases_pkey' })
  id: number;

  @Column({ name: 'product_id', type: 'int' })
  productId: number;

  @ManyToOne(() => Product, { onDelete: 'NO ACTION' })
  @JoinColumn({ name: 'product_id', foreignKeyConstraintName: 'releases_product_fkey' })
  product?: Product;

  /** SemVer 2.0, as given (a build suffix included). */
  @Column({ type: 'varchar', length: 256 })
  version: string;

  @Column({ type: 'varchar', length: 8, default: 'stable' })
  channel: ReleaseChannel;

  @Column({ type: 'text', default: '' })
  notes: string;

  @Column({ name: 'required_features', type: 'jsonb', default: [] })
  requiredFeatures: string[];

  @TimestampColumn('created_at', { default: () => 'now()' })
  createdAt: Date;

  @TimestampColumn('published_at', { nullable: true })
  publishedAt: Date | null;

  @TimestampColumn('yanked_at', { nullable: true })
  yankedAt: Date | null;

  @OneToMany(() => ReleaseArtifact, (a) => a.release)
  artifacts?: ReleaseArtifact[];
}

/** One uploaded file of a release, for one platform and architecture (Node's names). */
@Entity('release_artifacts')
@Index(ARTIFACT_FILENAME_INDEX, ['releaseId', 'filename'], { unique: true })
export class ReleaseArtifact {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'release_artifacts_pkey' })
  id: number;

  @Column({ name: 'release_id', type: 'int' })
  releaseId: number;

  @ManyToOne(() => Release, (r) => r.artifacts, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'release_id', foreignKeyConstraintName: 'release_artifacts_release_fkey' })
  release?: Release;

  @Column({ type: 'varchar', length: 200 })
  filename: string;

  @Column({ type: 'varchar', length: 16 })
  platform: string;

  @Column({ type: 'varchar', length: 16 })
  arch: string;

  /** Bytes; bigint comes back from pg as a string. */
  @Column({ type: 'bigint', transformer: { to: (v: number) => v, from: (v: string) => Number(v) } })
  size: number;

  @Column({ type: 'varchar', length: 64 })
  sha256: string;

  @Column({ type: 'varchar', length: 128 })
  sha512: string;

  /** The updater's signature of the file (Tauri's minisign text, for one), as uploaded; null: none. */
  @Column({ type: 'text', nullable: true })
  signature: string | null;

  /** Where the bytes are in the release storage; never derived from the filename. */
  @Column({ name: 'storage_key', type: 'varchar', length: 300 })
  storageKey: string;

  @TimestampColumn('created_at', { default: () => 'now()' })
  createdAt: Date;
}

/** Downloads per release and UTC day (the dashboard's chart). */
@Entity('release_downloads')
export class ReleaseDownloadDay {
  @PrimaryColumn({ name: 'release_id', type: 'int', primaryKeyConstraintName: 'release_downloads_pkey' })
  releaseId: number;

  @PrimaryColumn({ type: 'date', primaryKeyConstraintName: 'release_downloads_pkey' })
  day: string;

  @Column({ type: 'int', default: 0 })
  count: number;

  @ManyToOne(() => Release, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'release_id', foreignKeyConstraintName: 'release_downloads_release_fkey' })
  release?: Release;
}
