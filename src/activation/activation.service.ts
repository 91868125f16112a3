import { Inject, Injectable } from '@nestjs/common';
import { EventRecorder } from '../events/event-recorder';
import { ALL_PRODUCTS, type Actor, type ProductScope } from '../common/auth/actor';
import { KeyedQueue } from '../common/concurrency/keyed-queue';
import { AppError } from '../common/errors/app-error';
import { ErrorCode } from '../common/errors/error-codes';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { MetricsService } from '../metrics/metrics.service';
import type { License } from '../licenses/license.entity';
import { licenseEvent } from '../licenses/licenses.service';
import { ActivationRequest, BoundSeat, SeatsService } from '../licenses/seats/seats.service';
import { lenientValidationPipe } from '../common/http/validation.pipe';
import type { Product } from '../products/product.entity';
import { ActiveSigningKey, KeyringService } from '../keyring/keyring.service';
import type { SignedEnvelope } from '../signing/envelope';
import { SigningService } from '../signing/signing.service';
import {
  ActivateRequestDto,
  LicenseFileRequestDto,
  SeatRequestDto,
  TrialRequestDto,
  UsageRequestDto,
  ValidateRequestDto,
} from './dto/client-requests.dto';
import { TrialsService } from '../licenses/trials/trials.service';
import { DeactivateResponseDto, HeartbeatResponseDto, UsageResponseDto, ValidateResponseDto } from './dto/client-responses.dto';
import { UsageService } from '../licenses/usage/usage.service';
import { usageSummary } from '../licenses/usage/usage-decisions';
import type { LicenseFileResponseDto } from './dto/license-file.dto';
import { armor, LICENSE_FILE_LABEL, LicenseFilePayload, licenseFileTimes, parseActivationRequest } from './license-file';
import { buildLicensePayload, LicensePayload, PayloadBinding, SignedLicense } from './license-payload';
import { LicensePreview, previewInputs } from './license-preview';
import type { LicenseDetailsDto } from '../licenses/dto/license.dto';

type PayloadLicense = Parameters<typeof buildLicensePayload>[0];
type PayloadProduct = Parameters<typeof buildLicensePayload>[1];

const LICENCE_QUEUE_MAX_WAIT_MS = 10_000;

/** The client use cases (docs/client-api.md) on top of the licence aggregate's seats and the signing key. */
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
    private readonly keyring: KeyringService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: MetricsService,
    private readonly events: EventRecorder,
    private readonly usageMeter: UsageService,
    private readonly trials: TrialsService,
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

  /** docs/client-api.md, Trials: a new trial licence bound to this machine, signed as an activation answer. */
  async startTrial(input: TrialRequestDto, actor: Actor): Promise<SignedLicense> {
    const { license, seat } = await this.trials.startTrial(
      {
        product: input.product,
        machineFingerprint: input.machine_fingerprint,
        hostname: input.hostname || null,
        os: input.os || null,
        appVersion: input.app_version || null,
        customerEmail: input.customer_email || null,
      },
      actor,
    );
    return this.signLicense(license, seat, input.envelope === true);
  }

  private async bindAndSign(input: ActivateRequestDto, actor: Actor): Promise<SignedLicense> {
    const { license, seat } = await this.bindSeat(input, actor);
    return this.signLicense(license, seat, input.envelope === true);
  }

  /** `{license, signature}`, plus the envelope of the same signature when the client asked for it (docs/signing.md, Envelopes). */
  private async signLicense(license: License, seat: PayloadBinding, withEnvelope: boolean): Promise<SignedLicense> {
    return this.signPayload(license, license.product as Product, seat, withEnvelope);
  }

  private async signPayload(
    license: PayloadLicense,
    product: PayloadProduct,
    seat: PayloadBinding,
    withEnvelope: boolean,
  ): Promise<SignedLicense> {
    const key = this.keyring.activeKey();
    const payload = this.licensePayload(license, product, seat, key);
    const { signature, envelope } = await this.signing.signWithEnvelope(payload, key);
    return withEnvelope ? { license: payload, signature, envelope } : { license: payload, signature };
  }

  /**
   * What a client receives for this licence, for the dashboard's preview (docs/dashboard.md): built and signed by the
   * same path as /activate, for the most recent seat when the licence is usable; otherwise unsigned, the machine a
   * placeholder. Binds, reads and records nothing.
   */
  async previewLicense(license: LicenseDetailsDto): Promise<LicensePreview> {
    const { seat, signed, binding, license: source, product } = previewInputs(license);
    if (signed) return { signed, seat, document: await this.signPayload(source, product, binding, false) };
    return { signed, seat, document: { license: this.licensePayload(source, product, binding, this.keyring.activeKey()) } };
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

  /** A licence file for a machine that holds a seat (docs/client-api.md, Licence file); the codes of validate otherwise. */
  async issueLicenseFile(input: LicenseFileRequestDto, actor: Actor): Promise<LicenseFileResponseDto> {
    const bound = await this.seats.boundSeat({ licenseKey: input.license_key, machineFingerprint: input.machine_fingerprint });
    return this.licenseFileFor(bound, actor, input.envelope === true);
  }

  /**
   * Air-gapped activation: the request text is parsed strictly, its body checked by the same rules as `/activate`
   * (field names prefixed `request.`), the seat bound on the same path as `/activate` (same checks, order, codes
   * and race safety) with the admin as actor, and the answer is a licence file.
   */
  async activateOffline(requestText: string, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<LicenseFileResponseDto> {
    const input = await parseOfflineActivation(requestText);
    // A token limited to products binds only their licences; another product's key is as unknown as a wrong one.
    // (A licence never changes product, so checking before the seat's transaction cannot race.)
    if (products !== null && !(await this.seats.licenseInProducts(input.license_key, products))) {
      throw new AppError(ErrorCode.INVALID_KEY, 400, 'The licence key does not exist');
    }
    return this.licenseFileFor(await this.bindSeat(input, actor), actor, input.envelope === true);
  }

  /**
   * Signs the activation payload plus the file's times; the file is returned only once its event is recorded. With
   * `withEnvelope` the file is version 2: its JSON also carries the envelope, and so does the answer.
   */
  private async licenseFileFor({ license, seat, seats }: BoundSeat, actor: Actor, withEnvelope: boolean): Promise<LicenseFileResponseDto> {
    const key = this.keyring.activeKey();
    const payload = this.licensePayload(license, license.product as Product, seat, key);
    const file: LicenseFilePayload = { ...payload, ...licenseFileTimes(new Date(), payload.policy.license_file_ttl_days) };
    const { signature, envelope } = await this.signing.signWithEnvelope(file, key);
    await this.events.record(
      undefined,
      licenseEvent('license.file_issued', actor, license, {
        seats,
        now: new Date(),
        details: {
          machine_fingerprint: seat.machineFingerprint,
          hostname: seat.hostname,
          seat_id: Number(seat.id),
          file_expires_at: file.file_expires_at,
        },
      }),
    );
    if (!withEnvelope)
      return { license_file: armor(LICENSE_FILE_LABEL, { license: file, signature }), file_expires_at: file.file_expires_at };
    return {
      license_file: armor(LICENSE_FILE_LABEL, { license: file, signature, envelope }),
      file_expires_at: file.file_expires_at,
      envelope,
    };
  }

  async deactivate(input: SeatRequestDto, actor: Actor): Promise<DeactivateResponseDto> {
    const { canReactivate } = await this.perLicence.run(input.license_key, () =>
      this.seats.deactivateSeat({ licenseKey: input.license_key, machineFingerprint: input.machine_fingerprint }, actor),
    );
    return { message: 'Licence deactivated on this machine', can_reactivate: canReactivate };
  }

  /** With a nonce, the answer is signed (docs/client-api.md, Signed validation); without one it costs nothing more than before. */
  async validate(input: ValidateRequestDto): Promise<ValidateResponseDto> {
    const check = await this.seats.checkSeat(
      { licenseKey: input.license_key, machineFingerprint: input.machine_fingerprint },
      this.config.lastSeenIntervalSeconds,
    );
    const answer: ValidateResponseDto = {
      valid: check.valid,
      status: check.status,
      expires_at: check.license.expiresAt ? check.license.expiresAt.toISOString() : null,
      revoked: check.license.revoked,
      grace_ends_at: check.graceEndsAt ? check.graceEndsAt.toISOString() : null,
      code: check.code,
      ...usageSummary(check.license, check.latestUsage, new Date()),
    };
    return this.signedAnswer(answer, input);
  }

  /** docs/client-api.md, Usage: counts on the licence's meter; the answer is signed like validate's when a nonce is given. */
  async usage(input: UsageRequestDto, actor: Actor): Promise<UsageResponseDto> {
    const answer = await this.usageMeter.recordUsage(
      {
        licenseKey: input.license_key,
        machineFingerprint: input.machine_fingerprint,
        increment: input.increment ?? 1,
        idempotencyKey: input.idempotency_key,
      },
      actor,
    );
    return this.signedAnswer(answer, input);
  }

  /** With a nonce, the answer plus what it is about, the time and the key, signed (docs/client-api.md, Signed validation); also for update checks (docs/releases.md). */
  async signedAnswer<T extends object>(
    answer: T,
    input: { nonce?: string; license_key: string; machine_fingerprint: string; envelope?: boolean },
  ): Promise<T | (T & { signature: string; envelope?: SignedEnvelope })> {
    if (input.nonce === undefined) return answer;
    const key = this.keyring.activeKey();
    const signed = {
      ...answer,
      nonce: input.nonce,
      license_key: input.license_key,
      machine_fingerprint: input.machine_fingerprint,
      checked_at: new Date().toISOString(),
      key_id: key.keyId,
    };
    const { signature, envelope } = await this.signing.signWithEnvelope(signed, key);
    return input.envelope === true ? { ...signed, signature, envelope } : { ...signed, signature };
  }

  /** docs/client-api.md, Heartbeat: the machine is alive; refreshes its seat every time (one statement). */
  async heartbeat(input: SeatRequestDto): Promise<HeartbeatResponseDto> {
    const beat = await this.seats.heartbeat({ licenseKey: input.license_key, machineFingerprint: input.machine_fingerprint });
    return {
      valid: beat.valid,
      status: beat.status,
      code: beat.code,
      heartbeat_timeout_seconds: beat.heartbeatTimeoutSeconds,
      next_heartbeat_before: beat.nextHeartbeatBefore?.toISOString() ?? null,
    };
  }

  /** The `license` object this server signs for the binding with `key`, stamped with the time of signing. */
  licensePayload(license: PayloadLicense, product: PayloadProduct, binding: PayloadBinding, key: ActiveSigningKey): LicensePayload {
    return buildLicensePayload(license, product, binding, key.keyId, new Date());
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
