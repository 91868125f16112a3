import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { raw, runStatement, sql, type Sql } from '../database/statement';
import type { Release, ReleaseArtifact } from './release.entities';
import { ARTIFACT_ROWS, type ArtifactRow, RELEASE_ROWS, type ReleaseRow } from './release-rows';

/** What creating a release decides; the id and times are the table's. */
export type NewRelease = Pick<Release, 'productId' | 'version' | 'channel' | 'notes' | 'requiredFeatures'>;

/** An artifact to store: with the id of the one it replaces (same release and filename), or without for a new one. */
export type NewArtifact = Omit<ReleaseArtifact, 'id' | 'release'> & { id?: number };

/**
 * Releases and their artifacts (releases, release_artifacts): plain rows by key. Style: named SQL with typed rows
 * (docs/architecture.md, Database style).
 */
@Injectable()
export class ReleasesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(release: NewRelease, manager: EntityManager): Promise<Release> {
    const r = release;
    const [inserted] = await this.releases(
      manager,
      'releases-insert',
      sql`INSERT INTO releases (product_id, version, channel, notes, required_features)
       VALUES (${r.productId}, ${r.version}, ${r.channel}, ${r.notes}, ${JSON.stringify(r.requiredFeatures)}::jsonb)
       RETURNING ${raw(RELEASE_ROWS.columns)}`,
    );
    return inserted;
  }

  /** With its artifacts in upload order. */
  async getById(id: number, manager?: EntityManager): Promise<Release | null> {
    const releases = await this.releases(manager, 'releases-get', sql`SELECT ${raw(RELEASE_ROWS.columns)} FROM releases WHERE id = ${id}`);
    return (await this.withArtifacts(releases, manager))[0] ?? null;
  }

  /** SELECT ... FOR UPDATE on the release row, without its artifacts. */
  async lockById(id: number, manager: EntityManager): Promise<Release | null> {
    const [release] = await this.releases(
      manager,
      'releases-lock',
      sql`SELECT ${raw(RELEASE_ROWS.columns)} FROM releases WHERE id = ${id} FOR UPDATE`,
    );
    return release ?? null;
  }

  /** A product's releases, newest created first, with their artifacts. */
  async listByProduct(productId: number): Promise<Release[]> {
    const releases = await this.releases(
      undefined,
      'releases-list-by-product',
      sql`SELECT ${raw(RELEASE_ROWS.columns)} FROM releases WHERE product_id = ${productId} ORDER BY id DESC`,
    );
    return this.withArtifacts(releases);
  }

  /** Published, unyanked releases of a product with their artifacts: what entitlement chooses from. */
  async listOffered(productId: number): Promise<Release[]> {
    const releases = await this.releases(
      undefined,
      'releases-list-offered',
      sql`SELECT ${raw(RELEASE_ROWS.columns)} FROM releases WHERE product_id = ${productId} AND published_at IS NOT NULL AND yanked_at IS NULL`,
    );
    return this.withArtifacts(releases);
  }

  /** Writes the release's changeable columns; returns it as stored, without artifacts. */
  async save(release: Omit<Release, 'artifacts'>, manager: EntityManager): Promise<Release> {
    const r = release;
    const [saved] = await this.releases(
      manager,
      'releases-update',
      sql`UPDATE releases SET version = ${r.version}, channel = ${r.channel}, notes = ${r.notes},
         required_features = ${JSON.stringify(r.requiredFeatures)}::jsonb, published_at = ${r.publishedAt}, yanked_at = ${r.yankedAt}
       WHERE id = ${r.id} RETURNING ${raw(RELEASE_ROWS.columns)}`,
    );
    return saved;
  }

  async delete(id: number, manager: EntityManager): Promise<void> {
    await runStatement<{ id: number }>(manager, 'releases-delete', sql`DELETE FROM releases WHERE id = ${id} RETURNING id`);
  }

  async findArtifact(releaseId: number, filename: string, manager: EntityManager): Promise<ReleaseArtifact | null> {
    const [artifact] = await this.artifacts(
      manager,
      'release-artifacts-find',
      sql`SELECT ${raw(ARTIFACT_ROWS.columns)} FROM release_artifacts WHERE release_id = ${releaseId} AND filename = ${filename}`,
    );
    return artifact ?? null;
  }

  /** An artifact with its release (without the release's artifacts). */
  async getArtifact(id: number): Promise<ReleaseArtifact | null> {
    const [artifact] = await this.artifacts(
      undefined,
      'release-artifacts-get',
      sql`SELECT ${raw(ARTIFACT_ROWS.columns)} FROM release_artifacts WHERE id = ${id}`,
    );
    if (!artifact) return null;
    const [release] = await this.releases(
      undefined,
      'releases-get',
      sql`SELECT ${raw(RELEASE_ROWS.columns)} FROM releases WHERE id = ${artifact.releaseId}`,
    );
    return Object.assign(artifact, { release });
  }

  /** Inserts the artifact, or rewrites the one it replaces (its id given); returns it as stored. */
  async saveArtifact(artifact: NewArtifact, manager: EntityManager): Promise<ReleaseArtifact> {
    const a = artifact;
    const values = sql`${a.releaseId}, ${a.filename}, ${a.platform}, ${a.arch}, ${a.size}, ${a.sha256}, ${a.sha512}, ${a.signature}, ${a.storageKey}, ${a.createdAt}`;
    const columns = raw('release_id, filename, platform, arch, size, sha256, sha512, signature, storage_key, created_at');
    const [saved] =
      a.id === undefined
        ? await this.artifacts(
            manager,
            'release-artifacts-insert',
            sql`INSERT INTO release_artifacts (${columns}) VALUES (${values}) RETURNING ${raw(ARTIFACT_ROWS.columns)}`,
          )
        : await this.artifacts(
            manager,
            'release-artifacts-replace',
            sql`UPDATE release_artifacts SET (${columns}) = ROW(${values}) WHERE id = ${a.id} RETURNING ${raw(ARTIFACT_ROWS.columns)}`,
          );
    return saved;
  }

  /** The releases with their artifacts attached, each release's in upload order. */
  private async withArtifacts(releases: Release[], manager?: EntityManager): Promise<Release[]> {
    if (!releases.length) return releases;
    const artifacts = await this.artifacts(
      manager,
      'release-artifacts-of-releases',
      sql`SELECT ${raw(ARTIFACT_ROWS.columns)} FROM release_artifacts WHERE release_id = ANY(${releases.map((r) => r.id)}::int[]) ORDER BY id`,
    );
    for (const release of releases) release.artifacts = artifacts.filter((a) => a.releaseId === release.id);
    return releases;
  }

  private async releases(manager: EntityManager | undefined, name: string, statement: Sql): Promise<Release[]> {
    return (await runStatement<ReleaseRow>(manager ?? this.dataSource.manager, name, statement)).map(RELEASE_ROWS.fromRow);
  }

  private async artifacts(manager: EntityManager | undefined, name: string, statement: Sql): Promise<ReleaseArtifact[]> {
    return (await runStatement<ArtifactRow>(manager ?? this.dataSource.manager, name, statement)).map(ARTIFACT_ROWS.fromRow);
  }
}
