import { rowShape, type RowOf } from '../database/row-shape';
import { Release, ReleaseArtifact } from './release.entities';

/* The releases' rows read into their entities (docs/architecture.md, Database style), for ReleasesRepository. */

export const RELEASE_ROWS = rowShape(
  () => new Release(),
  'id, product_id, version, channel, notes, required_features, created_at, published_at, yanked_at',
);

/** A releases row (timestamptz as Date, jsonb parsed). */
export type ReleaseRow = RowOf<typeof RELEASE_ROWS>;

/** A release_artifacts row; bigint comes back from pg as a string. */
export const ARTIFACT_ROWS = rowShape(
  () => new ReleaseArtifact(),
  'id, release_id, filename, platform, arch, size, sha256, sha512, signature, storage_key, created_at',
  { convert: { size: (size: string) => Number(size) } },
);

export type ArtifactRow = RowOf<typeof ARTIFACT_ROWS>;
