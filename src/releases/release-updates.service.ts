import { countsAsDownload, decideRange, type DownloadRange } from './download-range';
import { Inject, Injectable } from '@nestjs/common';
import { gt } from 'semver';
import { stringify } from 'yaml';
import { ActivationService } from '../activation/activation.service';
import { AppError } from '../common/errors/app-error';
import { ErrorCode } from '../common/errors/error-codes';
import { APP_CONFIG, type AppConfig, DEFAULT_RELEASES_CONFIG } from '../config/app-config';
import { decideDownload, notEntitled } from '../licenses/download-decisions';
import type { License } from '../licenses/license.entity';
import { SeatsService } from '../licenses/seats/seats.service';
import type { Product } from '../products/product.entity';
import { ProductsService } from '../products/products.service';
import { DownloadLinks } from './download-links';
import { ReleaseCheckRequestDto, ReleaseCheckResponseDto, TauriUpdateDto, UpdateArtifactDto } from './dto/release.dto';
import { channelsFor, electronChannelFile, isSemVer, newestFirst, TAURI_ARCHES, TAURI_TARGETS } from './release-rules';
import { Release, ReleaseArtifact, type ReleaseChannel } from './release.entities';
import { type DownloadSource, RELEASE_STORAGE, type ReleaseStorage } from './release-storage';
import { ReleaseDownloadsRepository } from './release-downloads.repository';
import { ReleasesRepository } from './releases.repository';

/** The feed's credentials: `Authorization: License <key>` and `X-Machine-Fingerprint`, as sent. */
export interface FeedCredentials {
  authorization?: string;
  fingerprint?: string;
}

const unauthorized = (message: string) => new AppError(ErrorCode.UNAUTHORIZED, 401, message);
const FINGERPRINT = /^sha256:[0-9a-f]{64}$/;

/** What a client may download and how (docs/releases.md): the update check, the updaters' feeds and the signed links. */
@Injectable()
export class ReleaseUpdatesService {
  private readonly links: DownloadLinks;
  private readonly linkSeconds: number;

  constructor(
    private readonly releases: ReleasesRepository,
    private readonly downloadCounts: ReleaseDownloadsRepository,
    private readonly seats: SeatsService,
    private readonly products: ProductsService,
    private readonly activation: ActivationService,
    @Inject(RELEASE_STORAGE) private readonly storage: ReleaseStorage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.links = new DownloadLinks(config.keyringSecret);
    this.linkSeconds = (config.releases ?? DEFAULT_RELEASES_CONFIG).linkSeconds;
  }

  /**
   * The releases this licence may download on this machine, in decideDownload's order of refusals; `product`, when
   * the client names one, must be the licence's (PRODUCT_MISMATCH, as /activate).
   */
  private async entitled(
    licenseKey: string,
    machineFingerprint: string,
    productCode: string | undefined,
  ): Promise<{ license: License; product: Product; releases: Release[]; offered: Release[] }> {
    const held = await this.seats.seatHolding({ licenseKey, machineFingerprint });
    const licenceProduct = held?.license.product?.code;
    if (held && productCode !== undefined && productCode !== licenceProduct) {
      throw new AppError(ErrorCode.PRODUCT_MISMATCH, 400, 'The licence belongs to another product', {
        expected: productCode,
        license_product: licenceProduct,
      });
    }
    const product = held ? await this.products.findByCode(licenceProduct as string) : null;
    const offered = held && product ? await this.releases.listOffered(product.id) : [];
    const decision = decideDownload(
      held?.license ?? null,
      held ? { seatHeld: held.seatHeld } : null,
      product?.updatePolicy ?? 'current',
      offered,
      new Date(),
    );
    if (decision.kind === 'deny') throw decision.error;
    return { license: (held as { license: License }).license, product: product as Product, releases: decision.releases, offered };
  }

  /** docs/releases.md, Checking for updates: the newest entitled release above current_version, signed like validate. */
  async check(input: ReleaseCheckRequestDto): Promise<ReleaseCheckResponseDto> {
    const { license, releases } = await this.entitled(input.license_key, input.machine_fingerprint, input.product);
    const channels = channelsFor(input.channel ?? 'stable');
    const fits = (a: ReleaseArtifact) => a.platform === input.platform && (input.arch === undefined || a.arch === input.arch);
    const newest = newestFirst(
      releases.filter((r) => channels.includes(r.channel) && gt(r.version, input.current_version) && r.artifacts?.some(fits)),
    )[0];
    const answer: ReleaseCheckResponseDto = {
      update: newest
        ? {
            version: newest.version,
            channel: newest.channel,
            notes: newest.notes,
            published_at: (newest.publishedAt as Date).toISOString(),
            artifacts: (newest.artifacts ?? []).filter(fits).map((a) => this.offer(a, license.id)),
          }
        : null,
    };
    return this.activation.signedAnswer(answer, input);
  }

  /** An artifact with a fresh signed link for this licence. */
  private offer(artifact: ReleaseArtifact, licenseId: number): UpdateArtifactDto {
    const expiresAt = Math.floor(Date.now() / 1000) + this.linkSeconds;
    const token = this.links.token({ artifactId: artifact.id, licenseId, expiresAt });
    return {
      filename: artifact.filename,
      platform: artifact.platform,
      arch: artifact.arch,
      size: artifact.size,
      sha256: artifact.sha256,
      sha512: artifact.sha512,
      url: `${this.config.publicUrl}/api/v1/releases/downloads/${token}/${encodeURIComponent(artifact.filename)}`,
      url_expires_at: new Date(expiresAt * 1000).toISOString(),
    };
  }

  /** The feed's licence and machine: missing or unknown, 401 (docs/releases.md, Feeds); then decideDownload's codes. */
  private async feedEntitled(productCode: string, credentials: FeedCredentials) {
    const key = /^License\s+(\S{1,64})\s*$/i.exec(credentials.authorization ?? '')?.[1];
    if (!key) throw unauthorized('Send Authorization: License <licence key>');
    const fingerprint = (credentials.fingerprint ?? '').trim().toLowerCase();
    if (!FINGERPRINT.test(fingerprint)) throw unauthorized('Send X-Machine-Fingerprint: the activated machine fingerprint');
    try {
      return await this.entitled(key.trim().toUpperCase(), fingerprint, productCode);
    } catch (err) {
      if (err instanceof AppError && err.code === ErrorCode.INVALID_KEY) throw unauthorized('Unknown licence key');
      if (err instanceof AppError && err.code === ErrorCode.NOT_ACTIVATED) throw unauthorized('This machine holds no seat of the licence');
      throw err;
    }
  }

  /**
   * electron-updater's channel file (docs/releases.md, electron-updater): electron-builder's layout for the newest
   * entitled release with files for the platform. 404 when the product has none; 403 when none is this licence's.
   */
  async electronFeed(productCode: string, file: string, credentials: FeedCredentials): Promise<string> {
    const wanted = electronChannelFile(file);
    if (!wanted) throw AppError.notFound('Channel file');
    const { license, releases, offered } = await this.feedEntitled(productCode, credentials);
    const fits = (a: ReleaseArtifact) => a.platform === wanted.platform && (wanted.arches === null || wanted.arches.includes(a.arch));
    const channels = channelsFor(wanted.channel);
    const candidates = (list: Release[]) => list.filter((r) => channels.includes(r.channel) && r.artifacts?.some(fits));
    const newest = newestFirst(candidates(releases))[0];
    if (!newest) {
      if (candidates(offered).length > 0) throw notEntitled();
      throw AppError.notFound('Release for this channel file');
    }
    const files = (newest.artifacts ?? []).filter(fits).map((a) => ({
      url: this.offer(a, license.id).url,
      sha512: Buffer.from(a.sha512, 'hex').toString('base64'),
      size: a.size,
    }));
    return electronBuilderYaml({
      version: newest.version,
      files,
      path: files[0].url,
      sha512: files[0].sha512,
      releaseDate: (newest.publishedAt as Date).toISOString(),
      ...(newest.notes ? { releaseNotes: newest.notes } : {}),
    });
  }

  /**
   * The Tauri updater's answer (docs/releases.md, Tauri): the newest entitled release above `currentVersion` with a
   * signed artifact for the target and arch; null (204) when there is none.
   */
  async tauriFeed(
    productCode: string,
    channel: string,
    target: string,
    arch: string,
    currentVersion: string,
    credentials: FeedCredentials,
  ): Promise<TauriUpdateDto | null> {
    const fields: { field: string; message: string }[] = [];
    if (!['stable', 'beta', 'alpha'].includes(channel)) fields.push({ field: 'channel', message: 'channel must be stable, beta or alpha' });
    const platform = Object.hasOwn(TAURI_TARGETS, target) ? TAURI_TARGETS[target] : undefined;
    if (!platform) fields.push({ field: 'target', message: `target must be one of ${Object.keys(TAURI_TARGETS).join(', ')}` });
    const nodeArch = Object.hasOwn(TAURI_ARCHES, arch) ? TAURI_ARCHES[arch] : undefined;
    if (!nodeArch) fields.push({ field: 'arch', message: `arch must be one of ${Object.keys(TAURI_ARCHES).join(', ')}` });
    if (!isSemVer(currentVersion)) fields.push({ field: 'current_version', message: 'current_version must be a SemVer 2.0 version' });
    if (fields.length) throw AppError.validation(fields);
    const { license, releases } = await this.feedEntitled(productCode, credentials);
    const channels = channelsFor(channel as ReleaseChannel);
    const fits = (a: ReleaseArtifact) => a.platform === platform && a.arch === nodeArch && a.signature !== null;
    const newest = newestFirst(
      releases.filter((r) => channels.includes(r.channel) && gt(r.version, currentVersion) && r.artifacts?.some(fits)),
    )[0];
    if (!newest) return null;
    const artifact = (newest.artifacts ?? []).find(fits) as ReleaseArtifact;
    return {
      version: newest.version,
      notes: newest.notes,
      pub_date: (newest.publishedAt as Date).toISOString(),
      url: this.offer(artifact, license.id).url,
      signature: artifact.signature as string,
    };
  }

  /**
   * What a customer may download with a licence (docs/portal.md, Downloads): every entitled release, newest first, each
   * file with a fresh signed link; none when the licence may download nothing.
   */
  async customerDownloads(
    licenseKey: string,
  ): Promise<{ version: string; channel: ReleaseChannel; notes: string; published_at: string; artifacts: UpdateArtifactDto[] }[]> {
    const held = await this.seats.seatHolding({ licenseKey, machineFingerprint: '' });
    const product = held ? await this.products.findByCode(held.license.product?.code ?? '') : null;
    if (!held || !product) return [];
    const decision = decideDownload(held.license, null, product.updatePolicy, await this.releases.listOffered(product.id), new Date());
    if (decision.kind === 'deny') return [];
    return newestFirst(decision.releases).map((r) => ({
      version: r.version,
      channel: r.channel,
      notes: r.notes,
      published_at: (r.publishedAt as Date).toISOString(),
      artifacts: (r.artifacts ?? []).map((a) => this.offer(a, held.license.id)),
    }));
  }

  /**
   * A signed link's bytes (docs/releases.md, Download links): a tampered or expired link, 403 FORBIDDEN; a release
   * the licence may no longer have (yanked, revoked, ...), 403 RELEASE_NOT_ENTITLED. A GET counts as a download
   * unless its `Range` resumes past byte 0 or is unsatisfiable (then `range` says so and there is no source).
   */
  async download(
    token: string,
    rangeHeader: string | undefined,
    isGet: boolean,
  ): Promise<{ source: DownloadSource | null; artifact: ReleaseArtifact; range: DownloadRange }> {
    const now = Date.now();
    const grant = this.links.verify(token, Math.floor(now / 1000));
    if (!grant) throw new AppError(ErrorCode.FORBIDDEN, 403, 'This download link is invalid or has expired; ask for a new one');
    const artifact = await this.releases.getArtifact(grant.artifactId);
    const license = await this.seats.licenseById(grant.licenseId);
    if (!artifact?.release || !license || license.productId !== artifact.release.productId) throw notEntitled();
    const product = await this.products.findByCode(license.product?.code ?? '');
    const decision = decideDownload(license, null, product?.updatePolicy ?? 'current', [artifact.release], new Date(now));
    if (decision.kind === 'deny' || decision.releases.length === 0) throw notEntitled();
    const range = decideRange(rangeHeader, Number(artifact.size));
    if (range.kind === 'unsatisfiable') return { source: null, artifact, range };
    if (isGet && countsAsDownload(range)) await this.downloadCounts.countDownload(artifact.releaseId);
    const seconds = Math.max(1, grant.expiresAt - Math.floor(now / 1000));
    const ignoredRange = rangeHeader !== undefined && range.kind === 'whole';
    return { source: await this.storage.source(artifact.storageKey, artifact.filename, seconds, ignoredRange), artifact, range };
  }
}

/** electron-builder's channel file, as its own publisher writes it (a YAML mapping; strings quoted where YAML needs). */
function electronBuilderYaml(info: Record<string, unknown>): string {
  return stringify(info, { lineWidth: 0 });
}
