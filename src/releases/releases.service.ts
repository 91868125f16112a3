import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { EventRecorder } from '../events/event-recorder';
import { type Actor, ALL_PRODUCTS, type ProductScope, productScopeIncludes } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import { uniqueViolation } from '../common/errors/database-errors';
import { ErrorCode } from '../common/errors/error-codes';
import { APP_CONFIG, type AppConfig, DEFAULT_RELEASES_CONFIG } from '../config/app-config';
import type { Product } from '../products/product.entity';
import { ProductsService } from '../products/products.service';
import { ArtifactDigest, ArtifactTooLarge } from './artifact-digest';
import { CreateReleaseDto, DownloadDayDto, ReleaseDto, ReleaseArtifactDto, ReleaseDownloadsDto } from './dto/release.dto';
import { ARCHES, filenameProblem, PLATFORMS } from './release-rules';
import { Release, RELEASE_VERSION_INDEX } from './release.entities';
import { RELEASE_STORAGE, type ReleaseStorage } from './release-storage';
import { ReleaseDownloadsRepository } from './release-downloads.repository';
import { ReleasesRepository } from './releases.repository';

export interface ArtifactUpload {
  filename: string;
  platform: unknown;
  arch: unknown;
  signature?: string;
  /** The declared Content-Length, if any: over the limit is refused before a byte is read. */
  declaredLength?: number;
  body: Readable;
}

const MAX_SIGNATURE_CHARS = 8192;
const DOWNLOAD_DAYS = 30;

/** The admin's release use cases (docs/releases.md, Publishing): drafts, artifacts, publish, yank, delete. */
@Injectable()
export class ReleasesService {
  private readonly maxBytes: number;

  constructor(
    private readonly releases: ReleasesRepository,
    private readonly downloadCounts: ReleaseDownloadsRepository,
    private readonly products: ProductsService,
    private readonly events: EventRecorder,
    @Inject(RELEASE_STORAGE) private readonly storage: ReleaseStorage,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.maxBytes = (config.releases ?? DEFAULT_RELEASES_CONFIG).maxBytes;
  }

  /** A product by code within the credential's products; 404 otherwise. */
  async productInScope(code: string, scope: ProductScope): Promise<Product> {
    const product = await this.products.findByCode(code);
    if (!product || !productScopeIncludes(scope, product.id)) throw AppError.notFound('Product');
    return product;
  }

  /** A release (with artifacts) of a product within the credential's products; 404 otherwise, another product's too. */
  async releaseInScope(id: number, scope: ProductScope): Promise<{ release: Release; product: Product }> {
    const release = await this.releases.getById(id);
    if (!release || !productScopeIncludes(scope, release.productId)) throw AppError.notFound('Release');
    const [product] = await this.products.listProducts([release.productId]);
    if (!product) throw AppError.notFound('Release');
    return { release, product };
  }

  /**
   * A release reached under a product's path (the dashboard's `/products/:code/releases/:id`): 404 when it belongs to
   * another product, as an unknown id is.
   */
  async releaseOfProduct(code: string, id: number, scope: ProductScope = ALL_PRODUCTS): Promise<Release> {
    const { release, product } = await this.releaseInScope(id, scope);
    if (product.code !== code) throw AppError.notFound('Release');
    return release;
  }

  async create(code: string, input: CreateReleaseDto, actor: Actor, scope: ProductScope = ALL_PRODUCTS): Promise<ReleaseDto> {
    const product = await this.productInScope(code, scope);
    // A feature the product does not offer is one no licence of it can carry: the release could never be downloaded.
    const unknown = (input.required_features ?? []).filter((f) => !product.availableFeatures.includes(f));
    if (unknown.length)
      throw AppError.field(
        'required_features',
        `${product.code} offers no feature ${unknown.join(', ')} (its available_features: ${product.availableFeatures.join(', ') || 'none'})`,
      );
    try {
      const release = await this.events.transaction(async (manager) => {
        const saved = await this.releases.insert(
          {
            productId: product.id,
            version: input.version,
            channel: input.channel ?? 'stable',
            notes: input.notes ?? '',
            requiredFeatures: input.required_features ?? [],
          },
          manager,
        );
        await this.events.record(manager, {
          type: 'release.created',
          actor,
          productId: product.id,
          productCode: product.code,
          details: { release_id: saved.id, version: saved.version, channel: saved.channel },
        });
        return saved;
      });
      release.artifacts = [];
      return ReleaseDto.from(release, product.code, 0);
    } catch (err) {
      if (uniqueViolation(err) === RELEASE_VERSION_INDEX)
        throw AppError.conflict(`${product.code} already has a release ${input.version}`, { field: 'version' });
      throw err;
    }
  }

  async list(code: string, scope: ProductScope = ALL_PRODUCTS): Promise<ReleaseDto[]> {
    const product = await this.productInScope(code, scope);
    const releases = await this.releases.listByProduct(product.id);
    const totals = await this.downloadCounts.totals(releases.map((r) => r.id));
    return releases.map((r) => ReleaseDto.from(r, product.code, totals.get(r.id) ?? 0));
  }

  async get(id: number, scope: ProductScope = ALL_PRODUCTS): Promise<ReleaseDto> {
    const { release, product } = await this.releaseInScope(id, scope);
    const totals = await this.downloadCounts.totals([id]);
    return ReleaseDto.from(release, product.code, totals.get(id) ?? 0);
  }

  /** Downloads of one release in total and per UTC day over the last 30 days (the dashboard's chart). */
  async downloads(id: number, scope: ProductScope = ALL_PRODUCTS): Promise<ReleaseDownloadsDto> {
    const { release } = await this.releaseInScope(id, scope);
    const since = new Date(Date.now() - (DOWNLOAD_DAYS - 1) * 86_400_000).toISOString().slice(0, 10);
    const days: DownloadDayDto[] = (await this.downloadCounts.days(id, since)).map((d) => ({ day: d.day, downloads: d.count }));
    const totals = await this.downloadCounts.totals([id]);
    return { release_id: id, version: release.version, downloads: totals.get(id) ?? 0, days };
  }

  /**
   * Streams the body to storage under a fresh key while hashing it (docs/releases.md, Uploading artifacts), then
   * records the artifact; the same filename on a draft replaces the earlier one, whose bytes are removed after commit.
   */
  async upload(id: number, input: ArtifactUpload, actor: Actor, scope: ProductScope = ALL_PRODUCTS): Promise<ReleaseArtifactDto> {
    try {
      return await this.uploadChecked(id, input, actor, scope);
    } catch (err) {
      // An upload refused before its body was read: drain what the client still sends, so it reads the answer.
      if (!input.body.readableEnded) input.body.resume();
      throw err;
    }
  }

  private async uploadChecked(id: number, input: ArtifactUpload, actor: Actor, scope: ProductScope): Promise<ReleaseArtifactDto> {
    const fields = [
      ['filename', filenameProblem(input.filename)],
      ['platform', PLATFORMS.includes(input.platform as never) ? undefined : `platform must be one of ${PLATFORMS.join(', ')}`],
      ['arch', ARCHES.includes(input.arch as never) ? undefined : `arch must be one of ${ARCHES.join(', ')}`],
      [
        'X-Artifact-Signature',
        input.signature === undefined || (input.signature.length >= 1 && input.signature.length <= MAX_SIGNATURE_CHARS)
          ? undefined
          : `X-Artifact-Signature must be 1-${MAX_SIGNATURE_CHARS} characters`,
      ],
    ].filter((f): f is [string, string] => f[1] !== undefined);
    if (fields.length) throw AppError.validation(fields.map(([field, message]) => ({ field, message })));
    const { release, product } = await this.releaseInScope(id, scope);
    if (release.publishedAt) throw AppError.conflict('A published release keeps its artifacts', { release_id: id });
    if (input.declaredLength !== undefined && input.declaredLength > this.maxBytes) throw tooLarge(this.maxBytes);

    const key = `${product.id}/${release.id}/${randomUUID()}`;
    const digest = new ArtifactDigest(this.maxBytes);
    input.body.on('error', (err) => digest.destroy(err));
    try {
      await this.storage.write(key, input.body.pipe(digest));
    } catch (err) {
      await this.storage.remove(key).catch(() => undefined);
      if (err instanceof ArtifactTooLarge || digest.errored instanceof ArtifactTooLarge) throw tooLarge(this.maxBytes);
      throw err;
    }
    const { sha256, sha512 } = digest.digests();
    let replacedKey: string | undefined;
    try {
      const artifact = await this.events.transaction(async (manager) => {
        const locked = await this.releases.lockById(id, manager);
        if (!locked) throw AppError.notFound('Release');
        if (locked.publishedAt) throw AppError.conflict('A published release keeps its artifacts', { release_id: id });
        const previous = await this.releases.findArtifact(id, input.filename, manager);
        replacedKey = previous?.storageKey;
        const saved = await this.releases.saveArtifact(
          {
            ...(previous ? { id: previous.id } : {}),
            releaseId: id,
            filename: input.filename,
            platform: input.platform as string,
            arch: input.arch as string,
            size: digest.size,
            sha256,
            sha512,
            signature: input.signature ?? null,
            storageKey: key,
            createdAt: new Date(),
          },
          manager,
        );
        await this.events.record(manager, {
          type: 'release.artifact_uploaded',
          actor,
          productId: product.id,
          productCode: product.code,
          details: { release_id: id, version: release.version, filename: saved.filename, size: saved.size, sha256, replaced: !!previous },
        });
        return saved;
      });
      if (replacedKey) await this.storage.remove(replacedKey).catch(() => undefined);
      return {
        filename: artifact.filename,
        platform: artifact.platform,
        arch: artifact.arch,
        size: artifact.size,
        sha256,
        sha512,
        signature: artifact.signature,
        uploaded_at: artifact.createdAt.toISOString(),
      };
    } catch (err) {
      await this.storage.remove(key).catch(() => undefined);
      throw err;
    }
  }

  /** Sets published_at; a release without artifacts or already published: 409. */
  async publish(id: number, actor: Actor, scope: ProductScope = ALL_PRODUCTS): Promise<ReleaseDto> {
    return this.change(id, actor, scope, 'release.published', (release) => {
      if (release.publishedAt) throw AppError.conflict('The release is already published', { release_id: id });
      if (!release.artifacts?.length) throw AppError.conflict('Upload at least one artifact before publishing', { release_id: id });
      release.publishedAt = new Date();
    });
  }

  /** Hides a published release from checks, feeds and links; a draft (delete it) or a yanked one: 409. */
  async yank(id: number, actor: Actor, scope: ProductScope = ALL_PRODUCTS): Promise<ReleaseDto> {
    return this.change(id, actor, scope, 'release.yanked', (release) => {
      if (!release.publishedAt) throw AppError.conflict('A draft is deleted, not yanked', { release_id: id });
      if (release.yankedAt) throw AppError.conflict('The release is already yanked', { release_id: id });
      release.yankedAt = new Date();
    });
  }

  private async change(
    id: number,
    actor: Actor,
    scope: ProductScope,
    type: 'release.published' | 'release.yanked',
    apply: (release: Release) => void,
  ): Promise<ReleaseDto> {
    const { product } = await this.releaseInScope(id, scope);
    const release = await this.events.transaction(async (manager) => {
      if (!(await this.releases.lockById(id, manager))) throw AppError.notFound('Release');
      const current = (await this.releases.getById(id, manager)) as Release;
      apply(current);
      const { artifacts, ...row } = current;
      const saved = await this.releases.save(row, manager);
      await this.events.record(manager, {
        type,
        actor,
        productId: product.id,
        productCode: product.code,
        details: {
          release_id: id,
          version: saved.version,
          channel: saved.channel,
          published_at: saved.publishedAt?.toISOString() ?? null,
          ...(type === 'release.yanked' ? { yanked_at: saved.yankedAt?.toISOString() ?? null } : {}),
        },
      });
      return { ...saved, artifacts };
    });
    const totals = await this.downloadCounts.totals([id]);
    return ReleaseDto.from(release, product.code, totals.get(id) ?? 0);
  }

  /** Deletes a draft and, after commit, its bytes; a published release stays (yank it): 409. */
  async remove(id: number, actor: Actor, scope: ProductScope = ALL_PRODUCTS): Promise<void> {
    const { product } = await this.releaseInScope(id, scope);
    const keys = await this.events.transaction(async (manager) => {
      if (!(await this.releases.lockById(id, manager))) throw AppError.notFound('Release');
      const current = (await this.releases.getById(id, manager)) as Release;
      if (current.publishedAt) throw AppError.conflict('A published release cannot be deleted; yank it', { release_id: id });
      await this.releases.delete(id, manager);
      await this.events.record(manager, {
        type: 'release.deleted',
        actor,
        productId: product.id,
        productCode: product.code,
        details: { release_id: id, version: current.version },
      });
      return (current.artifacts ?? []).map((a) => a.storageKey);
    });
    for (const key of keys) await this.storage.remove(key).catch(() => undefined);
  }
}

const tooLarge = (limit: number) =>
  new AppError(ErrorCode.PAYLOAD_TOO_LARGE, 413, `The artifact is larger than RELEASES_MAX_BYTES (${limit} bytes)`, { limit_bytes: limit });
