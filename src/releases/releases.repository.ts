import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, IsNull, Not } from 'typeorm';
import { Release, ReleaseArtifact } from './release.entities';

/** Releases and their artifacts (releases, release_artifacts): plain rows by key. Style: repository API (docs/architecture.md, Database style). */
@Injectable()
export class ReleasesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private manager(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  insert(release: Partial<Release>, manager: EntityManager): Promise<Release> {
    const repo = manager.getRepository(Release);
    return repo.save(repo.create(release));
  }

  /** With its artifacts in upload order. */
  async getById(id: number, manager?: EntityManager): Promise<Release | null> {
    const release = await this.manager(manager)
      .getRepository(Release)
      .findOne({ where: { id }, relations: { artifacts: true } });
    if (release?.artifacts) release.artifacts.sort((a, b) => a.id - b.id);
    return release;
  }

  /** SELECT ... FOR UPDATE on the release row, without its artifacts. */
  lockById(id: number, manager: EntityManager): Promise<Release | null> {
    return manager.getRepository(Release).findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  /** A product's releases, newest created first, with their artifacts. */
  async listByProduct(productId: number): Promise<Release[]> {
    const releases = await this.dataSource.manager
      .getRepository(Release)
      .find({ where: { productId }, relations: { artifacts: true }, order: { id: 'DESC' } });
    for (const r of releases) r.artifacts?.sort((a, b) => a.id - b.id);
    return releases;
  }

  /** Published, unyanked releases of a product with their artifacts: what entitlement chooses from. */
  async listOffered(productId: number): Promise<Release[]> {
    const releases = await this.dataSource.manager.getRepository(Release).find({
      where: { productId, publishedAt: Not(IsNull()), yankedAt: IsNull() },
      relations: { artifacts: true },
    });
    for (const r of releases) r.artifacts?.sort((a, b) => a.id - b.id);
    return releases;
  }

  save(release: Release, manager: EntityManager): Promise<Release> {
    return manager.getRepository(Release).save(release);
  }

  async delete(id: number, manager: EntityManager): Promise<void> {
    await manager.getRepository(Release).delete({ id });
  }

  findArtifact(releaseId: number, filename: string, manager: EntityManager): Promise<ReleaseArtifact | null> {
    return manager.getRepository(ReleaseArtifact).findOneBy({ releaseId, filename });
  }

  /** An artifact with its release. */
  getArtifact(id: number): Promise<ReleaseArtifact | null> {
    return this.dataSource.manager.getRepository(ReleaseArtifact).findOne({ where: { id }, relations: { release: true } });
  }

  async saveArtifact(artifact: Partial<ReleaseArtifact>, manager: EntityManager): Promise<ReleaseArtifact> {
    const repo = manager.getRepository(ReleaseArtifact);
    return repo.save(repo.create(artifact));
  }
}
