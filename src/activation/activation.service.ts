import { Inject, Injectable } from '@nestjs/common';
import { AuditService } from '../audit/audit.service';
import type { Actor } from '../common/auth/actor';
import { KeyedQueue } from '../common/concurrency/keyed-queue';
import { AppError } from '../common/errors/app-error';
import { ErrorCode } from '../common/errors/error-codes';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { MetricsService } from '../metrics/metrics.service';
import type { Activation } from '../licenses/activation.entity';
import type { License } from '../licenses/license.entity';
import { ActivationRequest, SeatsService } from '../licenses/seats.service';
import { lenientValidationPipe } from '../common/http/validation.pipe';
import type { Product } from '../products/product.entity';
import { SigningService } from '../signing/signing.service';
import { ActivateRequestDto, SeatRequestDto } from './dto/client-requests.dto';
import { DeactivateResponseDto, ValidateResponseDto } from './dto/client-responses.dto';
import type { LicenseFileResponseDto } from './dto/license-file.dto';
import {
  armor,
  DEFAULT_LICENSE_FILE_TTL_DAYS,
  LICENSE_FILE_LABEL,
  LicenseFilePayload,
  licenseFileTimes,
  parseActivationRequest,
} from './license-file';
import { buildLicensePayload, LicensePayload, PayloadBinding, SignedLicense } from './license-payload';

const LICENCE_QUEUE_MAX_WAIT_MS = 10_000;

/** The client use cases (CONTRACT 4) on top of the licence aggregate's seats and the signing key. */
@Injectable()
export class ActivationService {
  // Seat changes of one licence wait here, not in pool connections blocked on its row lock (the stress test starved
  // the pool); at most 10 s, so a stalled database or a flood on one licence cannot make the line wait without end.
  private readonly perLicence = new KeyedQueue(
    LICENCE_QUEUE_MAX_WAIT_MS,
    () => new AppError(ErrorCode.RATE_LIMITED, 429, 'Too many changes of this licence at once; retry in 1 s', { retry_after_seconds: 1 }),
  );

  constructor(
    private readonly seats: SeatsService,
    private readonly signing: SigningService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: MetricsService,
    private readonly audit: AuditService,
  ) {}

  /** Binds the machine and returns the signed licence; signing happens after the seat's transaction has committed. */
  async activate(input: ActivateRequestDto, actor: Actor): Promise<SignedLicense> {
    try {
      const signed = await this.bindAndSign(input, actor);
      this.metrics.activationResult('OK');
      return signed;
    } catch (err) {
      this.metrics.activationResult(err instanceof AppError ? err.code : 'ERROR');
      throw err;
    }
  }

  private async bindAndSign(input: ActivateRequestDto, actor: Actor): Promise<SignedLicense> {
    const { license, seat } = await this.bindSeat(input, actor);
    const payload = this.licensePayload(license, license.product as Product, seat);
    return { license: payload, signature: await this.signing.sign(payload) };
  }

  /** The one path that binds a seat, for `/activate` and for air-gapped activation alike. */
  private bindSeat(input: ActivateRequestDto, actor: Actor) {
    const request: ActivationRequest = {
      licenseKey: input.license_key,
      machineFingerprint: input.machine_fingerprint,
      hostname: input.hostname,
      os: input.os || null,
      appVersion: input.app_version || null,
      product: input.product,
    };
    return this.perLicence.run(input.license_key, () => this.seats.activateSeat(request, actor));
  }

  /** A licence file for a machine that holds a seat (CONTRACT 10); the codes of validate otherwise. */
  async issueLicenseFile(input: SeatRequestDto, actor: Actor): Promise<LicenseFileResponseDto> {
    const { license, seat } = await this.seats.boundSeat({ licenseKey: input.license_key, machineFingerprint: input.machine_fingerprint });
    return this.licenseFileFor(license, seat, actor);
  }

  /**
   * Air-gapped activation: the request text is parsed strictly, its body checked by the same rules as `/activate`
   * (field names prefixed `request.`), the seat bound on the same path as `/activate` (same checks, order, codes
   * and race safety) with the admin as actor, and the answer is a licence file.
   */
  async activateOffline(requestText: string, actor: Actor): Promise<LicenseFileResponseDto> {
    const input = await parseOfflineActivation(requestText);
    const { license, seat } = await this.bindSeat(input, actor);
    return this.licenseFileFor(license, seat, actor);
  }

  /** Signs the activation payload plus the file's times; the file is returned only once its audit entry is written. */
  private async licenseFileFor(license: License, seat: Activation, actor: Actor): Promise<LicenseFileResponseDto> {
    const payload = this.licensePayload(license, license.product as Product, seat);
    const policy = (payload as { policy?: { license_file_ttl_days?: number } }).policy;
    const file: LicenseFilePayload = {
      ...payload,
      ...licenseFileTimes(new Date(), policy?.license_file_ttl_days ?? DEFAULT_LICENSE_FILE_TTL_DAYS),
    };
    const signature = await this.signing.sign(file);
    await this.audit.record({
      action: 'license.file_issued',
      actor,
      licenseId: license.id,
      productCode: license.product?.code ?? null,
      details: {
        machine_fingerprint: seat.machineFingerprint,
        hostname: seat.hostname,
        seat_id: Number(seat.id),
        file_expires_at: file.file_expires_at,
      },
    });
    return { license_file: armor(LICENSE_FILE_LABEL, { license: file, signature }), file_expires_at: file.file_expires_at };
  }

  async deactivate(input: SeatRequestDto, actor: Actor): Promise<DeactivateResponseDto> {
    const { canReactivate } = await this.perLicence.run(input.license_key, () =>
      this.seats.deactivateSeat({ licenseKey: input.license_key, machineFingerprint: input.machine_fingerprint }, actor),
    );
    return { message: 'Licence deactivated on this machine', can_reactivate: canReactivate };
  }

  async validate(input: SeatRequestDto): Promise<ValidateResponseDto> {
    const check = await this.seats.checkSeat(
      { licenseKey: input.license_key, machineFingerprint: input.machine_fingerprint },
      this.config.lastSeenIntervalSeconds,
    );
    return {
      valid: check.valid,
      status: check.status,
      expires_at: check.license.expiresAt ? check.license.expiresAt.toISOString() : null,
      revoked: check.license.revoked,
      grace_ends_at: check.graceEndsAt ? check.graceEndsAt.toISOString() : null,
      code: check.code,
    };
  }

  /** The `license` object this server would sign for the binding (also the dashboard's payload preview). */
  licensePayload(license: License, product: Product, binding: PayloadBinding): LicensePayload {
    return buildLicensePayload(license, product, binding, this.signing.keyId);
  }
}

/** The request's body through the client API's own validation pipe, so an air-gapped activation accepts exactly what `/activate` does. */
export async function parseOfflineActivation(requestText: string): Promise<ActivateRequestDto> {
  const body = parseActivationRequest(requestText);
  try {
    return (await lenientValidationPipe.transform(body, { type: 'body', metatype: ActivateRequestDto })) as ActivateRequestDto;
  } catch (err) {
    const fields = err instanceof AppError ? (err.details?.fields as { field: string; message: string }[] | undefined) : undefined;
    if (!fields) throw err;
    throw AppError.validation(fields.map((f) => ({ field: `request.${f.field}`, message: f.message })));
  }
}
