import type { ReleaseChannel } from './release.entities';
import { Release, ReleaseArtifact } from './release.entities';

/*
 * The releases' rows as pg returns them, the column lists that read them and the one mapper per row type
 * (docs/architecture.md, Database style), for ReleasesRepository.
 */

export const RELEASE_COLUMNS = 'id, product_id, version, channel, notes, required_features, created_at, published_at, yanked_at';

export const ARTIFACT_COLUMNS = 'id, release_id, filename, platform, arch, size, sha256, sha512, signature, storage_key, created_at';

/** A releases row (timestamptz as Date, jsonb parsed). */
export interface ReleaseRow {
  id: number;
  product_id: number;
  version: string;
  channel: ReleaseChannel;
  notes: string;
  required_features: string[];
  created_at: Date;
  published_at: Date | null;
  yanked_at: Date | null;
}

/** A release_artifacts row; bigint comes back from pg as a string. */
export interface ArtifactRow {
  id: number;
  release_id: number;
  filename: string;
  platform: string;
  arch: string;
  size: string;
  sha256: string;
  sha512: string;
  signature: string | null;
  storage_key: string;
  created_at: Date;
}

export function releaseFromRow(r: ReleaseRow): Release {
  return Object.assign(new Release(), {
    id: r.id,
    productId: r.product_id,
    version: r.version,
    channel: r.channel,
    notes: r.notes,
    requiredFeatures: r.required_features,
    createdAt: r.created_at,
    publishedAt: r.published_at,
    yankedAt: r.yanked_at,
  });
}

export function artifactFromRow(r: ArtifactRow): ReleaseArtifact {
  return Object.assign(new ReleaseArtifact(), {
    id: r.id,
    releaseId: r.release_id,
    filename: r.filename,
    platform: r.platform,
    arch: r.arch,
    size: Number(r.size),
    sha256: r.sha256,
    sha512: r.sha512,
    signature: r.signature,
    storageKey: r.storage_key,
    createdAt: r.created_at,
  });
}
