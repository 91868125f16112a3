import { createHash, createPublicKey, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { hostname as osHostname, platform, release } from 'node:os';
import { ACTIVATION_REQUEST_LABEL, armor, dearmor } from './armor.js';
import { checkOffline, parseLicenseFile, signedTimeOf, verifyAnswerDocument, verifyDocument } from './check.js';
import { KeySet, keyIdOf } from './crypto.js';
import { listedKeys, resolveTrust } from './envelope.js';
import { LicenseServerError, NetworkError, VerificationError } from './errors.js';
import { defaultFingerprint, FINGERPRINT_PATTERN } from './fingerprint.js';
import { HttpOptions, requestJson } from './http.js';
import { RELAY_POOL_LABEL, RelayLease, RelayLeaseAnswer, RelayPool, verifyRelayLease } from './relay.js';
import { ClientState, StateFile } from './state.js';
import type {
  CheckResult,
  DeactivationAnswer,
  HeartbeatAnswer,
  JsonWebKeySet,
  LicenseFileAnswer,
  PublicKeyList,
  PublicKeyInput,
  SignedLicense,
  UpdateArtifact,
  UpdateCheckAnswer,
  UpdateQuery,
  UsageAnswer,
  UsageOptions,
  ValidationAnswer,
} from './types.js';

export interface LicenseClientOptions {
  /** Base URL of the licence server, e.g. `https://licences.example.com` or `https://vendor.example/licensing/` (the path is kept). */
  serverUrl: string;
  /** The one file where the client keeps its state (written atomically). */
  statePath: string;
  /** A secret of your application: salts the default fingerprint and keys the state file's integrity check. */
  appSalt: string;
  /**
   * Public keys you ship with the application (trust anchors), as PEMs and/or a JWK Set. Required unless
   * `fetchServerKeys` is on: by default these are the only keys the client trusts.
   */
  publicKeys?: PublicKeyInput[];
  jwks?: JsonWebKeySet;
  /**
   * Opt-in: also trust the keys the server publishes at `/api/v1/public-keys`, so a shipped application follows a
   * key rotation without an update. Trust then rests on TLS to `serverUrl`: whoever answers there (a hosts-file
   * line, a proxy) can issue licences. Each refresh replaces the fetched set; keys the server no longer publishes
   * or lists as revoked are refused from then on, pinned or not. Default false.
   */
  fetchServerKeys?: boolean;
  /**
   * Follow key rotations without an update and without trusting the server (docs/signing.md, Endorsed rotation): when a
   * signature names an unknown key, fetch `/api/v1/public-keys` and trust a key only through a chain of endorsements
   * from the shipped keys or `rootKeys`; keys listed as revoked are dropped, shipped or not. Default true, as in every
   * official client; `false` (or `pinToShippedKeys: true`) trusts the shipped keys only.
   */
  followEndorsements?: boolean;
  /** Trust the shipped keys only: a key rotation then needs an application update. Default false. */
  pinToShippedKeys?: boolean;
  /** Offline root keys (public halves) whose endorsements are trusted; they never sign licences themselves. */
  rootKeys?: PublicKeyInput[];
  /** Ask the server for envelopes (`envelope: true`; licence files version 2) and verify those. Default false. */
  envelopes?: boolean;
  /** With `fetchServerKeys`: online calls refresh the key set when it is older than this. Default 3600 s. */
  keyRefreshIntervalSeconds?: number;
  /** The product code of this application; activations send it and checks require it. */
  product?: string;
  /** Replaces the default machine fingerprint (`sha256:` + 64 hex digits). */
  fingerprint?: string | (() => string | Promise<string>);
  /** How far the local clock may be behind the latest signed server time before it counts as tampering. Default 300 s. */
  clockToleranceSeconds?: number;
  /** Refuse offline use when the latest signed server time is older than this (optional). */
  maxOfflineDays?: number;
  /** Per-request timeout, default 10 s; retries of safe requests, default 2. */
  timeoutMs?: number;
  retries?: number;
  /** For tests and simulations. */
  now?: () => Date;
  fetch?: typeof fetch;
}

export interface MachineInfo {
  hostname?: string;
  os?: string;
  appVersion?: string;
}

export interface HeartbeatLoopOptions {
  /** Called after every heartbeat answer (also when the server says the seat is gone). */
  onBeat?: (answer: HeartbeatAnswer) => void;
  /** Called on a failed attempt; the loop keeps going with backoff. */
  onError?: (error: unknown) => void;
  /** Called once when the server answers NOT_ACTIVATED (the seat was released); the loop stops. */
  onSeatLost?: (error: LicenseServerError) => void;
  /** Interval when the licence has no heartbeat timeout, default 15 minutes. */
  fallbackIntervalSeconds?: number;
}

export interface HeartbeatLoop {
  stop(): void;
  readonly stopped: Promise<void>;
}

export interface RelayHeartbeatOptions {
  /** Called after every verified heartbeat with the renewed lease. */
  onBeat?: (lease: RelayLease) => void;
  /** Called on a failed attempt (no answer, an answer that does not verify); the loop keeps going with backoff. */
  onError?: (error: unknown) => void;
  /** Called once when the relay answers NOT_ACTIVATED (the seat went back to the pool); the loop stops. */
  onLeaseLost?: (error: LicenseServerError) => void;
}

/**
 * A seat leased from a relay on the customer's network (docs/clients.md, Relay leases), verified: the pool by the vendor's
 * keys, the lease by the pool's relay key. Keep it alive with `heartbeat()` every `lease.heartbeat_interval_seconds` (or
 * `startHeartbeat()`), give it back with `release()`.
 */
export class RelaySeat {
  constructor(
    private readonly client: LicenseClient,
    /** The relay's base URL. */
    readonly relayUrl: string,
    private answer: RelayLeaseAnswer,
    private verified: { lease: RelayLease; pool: RelayPool },
  ) {}

  /** The verified lease (renewed by each heartbeat). */
  get lease(): RelayLease {
    return this.verified.lease;
  }

  /** The verified pool the seat comes from; `pool.license` is the vendor-signed licence. */
  get pool(): RelayPool {
    return this.verified.pool;
  }

  get expiresAt(): Date {
    return new Date(this.verified.lease.expires_at);
  }

  /** Renews the lease; the answer is verified like the first one. NOT_ACTIVATED (a LicenseServerError): the seat is gone. */
  async heartbeat(): Promise<RelayLease> {
    const answer = await this.client.relayRequest<RelayLeaseAnswer>(this.relayUrl, '/relay/v1/leases/heartbeat', true);
    const renewed = { ...answer, pool_file: answer.pool_file ?? this.answer.pool_file };
    this.verified = await this.client.verifyRelayAnswer(renewed);
    this.answer = renewed;
    return this.verified.lease;
  }

  /** Gives the seat back to the pool (sent once: a repeat would answer NOT_ACTIVATED). */
  async release(): Promise<{ released: number }> {
    return this.client.relayRequest<{ released: number }>(this.relayUrl, '/relay/v1/leases/release', false);
  }

  /** Heartbeats every `heartbeat_interval_seconds` (±10 %), retrying failures sooner, until stopped or the seat is gone. */
  startHeartbeat(options: RelayHeartbeatOptions = {}): HeartbeatLoop {
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    let failures = 0;
    let resolveStopped: () => void = () => undefined;
    const stoppedPromise = new Promise<void>((resolve) => (resolveStopped = resolve));
    const stop = () => {
      if (stopped) return;
      stopped = true;
      if (timer) clearTimeout(timer);
      resolveStopped();
    };
    const interval = () => this.lease.heartbeat_interval_seconds * 1000;
    const schedule = (ms: number) => {
      if (!stopped) timer = setTimeout(beat, Math.max(0, ms) * (0.9 + Math.random() * 0.2));
    };
    const beat = () => {
      this.heartbeat().then(
        (lease) => {
          failures = 0;
          options.onBeat?.(lease);
          schedule(interval());
        },
        (err: unknown) => {
          if (err instanceof LicenseServerError && SEAT_GONE.has(err.code)) {
            options.onLeaseLost?.(err);
            stop();
            return;
          }
          options.onError?.(err);
          failures++;
          schedule(Math.min(1000 * 2 ** failures, interval()));
        },
      );
    };
    schedule(interval());
    return { stop, stopped: stoppedPromise };
  }
}

/** The licence server's client: online calls, licence files and an offline check, with its state in one file. */
export class LicenseClient {
  private readonly http: HttpOptions;
  private readonly pinned: KeySet;
  private readonly roots: KeySet;
  private readonly store: StateFile;
  private readonly now: () => Date;
  private fingerprintValue?: string;

  constructor(private readonly options: LicenseClientOptions) {
    if (!options.appSalt) throw new TypeError('appSalt is required');
    if ('trustServerKeys' in options) {
      throw new TypeError('trustServerKeys was replaced by fetchServerKeys (default false: only the pinned keys are trusted)');
    }
    this.http = {
      serverUrl: options.serverUrl,
      timeoutMs: options.timeoutMs ?? 10_000,
      retries: options.retries ?? 2,
      fetch: options.fetch ?? globalThis.fetch,
    };
    this.pinned = KeySet.from(options.publicKeys, options.jwks);
    this.roots = KeySet.from(options.rootKeys);
    const anchored = this.pinned.ids().length > 0 || (this.followsEndorsements() && this.roots.ids().length > 0);
    if (!anchored && options.fetchServerKeys !== true) {
      throw new TypeError("publicKeys or jwks is required: ship the server's public keys, or opt in with fetchServerKeys: true");
    }
    this.store = new StateFile(options.statePath, createHash('sha256').update(`licence-client-state\0${options.appSalt}`).digest());
    // The state file's folder exists (made 0700) and is writable before any call binds a seat (docs/clients.md, The state file).
    this.store.prepare();
    this.now = options.now ?? (() => new Date());
  }

  /** This machine's fingerprint: the option, or SHA-256 of the OS machine id and the application salt. */
  async fingerprint(): Promise<string> {
    if (this.fingerprintValue) return this.fingerprintValue;
    const given = this.options.fingerprint;
    const value = typeof given === 'function' ? await given() : (given ?? defaultFingerprint(this.options.appSalt));
    if (!FINGERPRINT_PATTERN.test(value)) throw new TypeError('a fingerprint is "sha256:" followed by 64 lower-case hex digits');
    this.fingerprintValue = value;
    return value;
  }

  /** Binds this machine to the licence key and stores the verified signed licence. */
  async activate(licenseKey: string, machine: MachineInfo = {}): Promise<SignedLicense> {
    this.store.prepare();
    const body = await this.activationBody(licenseKey, machine);
    await this.refreshKeysIfDue();
    // Activating again from the same fingerprint is idempotent on the server (docs/client-api.md, Activate), so a retry is safe.
    const answer = await requestJson<SignedLicense>(this.http, 'POST', '/api/v1/activate', body, true);
    return this.keepActivation(answer);
  }

  /** Verifies a signed licence answer (activation or trial) and stores it as this machine's activation. */
  private async keepActivation(answer: SignedLicense): Promise<SignedLicense> {
    const license = await this.verifyOnline(answer);
    this.update((state) => {
      state.activation = answer;
      delete state.license_file;
      delete state.last_validation;
      delete state.seat_lost;
      state.seat_seen_at = this.now().toISOString();
      state.latest_signed_at = later(state.latest_signed_at, signedTimeOf(license));
    });
    return answer;
  }

  /**
   * Starts the product's self-service trial on this machine (docs/client-api.md, Trials; `product` is required): the
   * signed trial licence is verified and kept like an activation, so `check()`, `validate()` and `deactivate()` work on
   * it. One trial per product and machine, ever: a second is a LicenseServerError `TRIAL_ALREADY_USED`; a product
   * without trials `TRIALS_DISABLED`. Never retried: a retry after a lost answer would meet `TRIAL_ALREADY_USED`.
   */
  async startTrial(machine: MachineInfo = {}, options: { customerEmail?: string } = {}): Promise<SignedLicense> {
    if (!this.options.product) throw new TypeError('startTrial() needs the product option');
    this.store.prepare();
    const trial = {
      ...(await this.machineBody(machine)),
      product: this.options.product,
      ...(options.customerEmail ? { customer_email: options.customerEmail } : {}),
    };
    await this.refreshKeysIfDue();
    const answer = await requestJson<SignedLicense>(this.http, 'POST', '/api/v1/trials', trial, false);
    return this.keepActivation(answer);
  }

  /**
   * Leases a seat from a relay on the customer's network (docs/clients.md, Relay leases). The answer is verified before it
   * is used: the pool file with the vendor keys this client trusts (shipped, or endorsed by them), the pool equal to its
   * signed payload, for this product and not expired; then the lease with the pool's relay key only, for this machine and
   * not expired. A forged pool or a lease signed by any other key is a VerificationError `SIGNATURE_INVALID` (the
   * other reasons: docs/clients.md, Relay leases). Asking again from the same machine renews the same lease.
   */
  async leaseFromRelay(relayUrl: string, machine: { hostname?: string } = {}): Promise<RelaySeat> {
    const body = { hostname: machine.hostname ?? osHostname() };
    const answer = await this.relayRequest<RelayLeaseAnswer>(relayUrl, '/relay/v1/leases', true, body);
    return new RelaySeat(this, relayUrl, answer, await this.verifyRelayAnswer(answer));
  }

  /** @internal A relay call with this machine's fingerprint (RelaySeat's heartbeat and release). */
  async relayRequest<T>(relayUrl: string, path: string, idempotent: boolean, extra: Record<string, unknown> = {}): Promise<T> {
    const body = { machine_fingerprint: await this.fingerprint(), ...extra };
    return requestJson<T>({ ...this.http, serverUrl: relayUrl }, 'POST', path, body, idempotent);
  }

  /** @internal Verifies a relay's lease answer with the vendor keys trusted now (docs/clients.md, Relay leases). */
  async verifyRelayAnswer(answer: RelayLeaseAnswer): Promise<{ lease: RelayLease; pool: RelayPool }> {
    const poolKeyId = poolEnvelopeKeyId(answer?.pool_file);
    const verified = verifyRelayLease(answer, {
      keys: await this.keysFor(poolKeyId),
      revoked: this.withdrawn(),
      fingerprint: await this.fingerprint(),
      product: this.options.product,
      now: this.now(),
    });
    if (!verified.ok) throw new VerificationError(verified.reason, verified.message);
    return verified.value;
  }

  /** Frees this machine's seat; the stored licence is removed when the server agrees. Never retried (limits count it). */
  async deactivate(): Promise<DeactivationAnswer> {
    const answer = await requestJson<DeactivationAnswer>(this.http, 'POST', '/api/v1/deactivate', await this.seatBody(), false);
    this.update((state) => {
      delete state.activation;
      delete state.license_file;
      delete state.last_validation;
      delete state.seat_seen_at;
      delete state.seat_lost;
    });
    return answer;
  }

  /**
   * Counts uses of a metered licence (docs/client-api.md, Usage). Every attempt carries the same idempotency key (generated
   * unless given), so a retry after a timeout or a 5xx counts once; the signed answer is verified like validate's.
   * USAGE_LIMIT_REACHED arrives as a LicenseServerError with `details.remaining`.
   */
  async usage(options: UsageOptions = {}): Promise<UsageAnswer> {
    await this.refreshKeysIfDue();
    const seat = await this.seatBody();
    const idempotencyKey = options.idempotencyKey ?? randomBytes(24).toString('base64url');
    const body = { ...seat, increment: options.increment ?? 1, idempotency_key: idempotencyKey };
    const nonce = randomBytes(24).toString('base64url');
    // Retried (network errors, 429, 502-504) with the same key: the server answers a repeat with the first count.
    const answer = await requestJson<UsageAnswer>(this.http, 'POST', '/api/v1/usage', { ...body, nonce, ...this.envelopeOption() }, true);
    await this.verifyAnswer(answer, nonce, seat, 'usage');
    this.update((state) => (state.latest_signed_at = later(state.latest_signed_at, Date.parse(answer.checked_at))));
    return answer;
  }

  /** A signed answer (validate, usage, update check), checked by verifyAnswerDocument with the keys trusted now. */
  private async verifyAnswer(
    answer: { key_id: string; envelope?: { key_id?: unknown } },
    nonce: string,
    seat: { license_key: string; machine_fingerprint: string },
    what: string,
  ): Promise<void> {
    const keyId = this.options.envelopes === true ? (answer.envelope?.key_id ?? answer.key_id) : answer.key_id;
    const keys = await this.keysFor(keyId);
    const verified = verifyAnswerDocument(answer, nonce, seat, keys, this.withdrawn(), this.options.envelopes === true, what);
    if (!verified.ok) throw new VerificationError(verified.reason, verified.message);
  }

  /** Online validation with a fresh nonce; the signed answer is verified (key, signature, nonce, key, machine) and remembered. */
  async validate(): Promise<ValidationAnswer> {
    await this.refreshKeysIfDue();
    const nonce = randomBytes(24).toString('base64url');
    const seat = await this.seatBody();
    const answer = await requestJson<ValidationAnswer>(
      this.http,
      'POST',
      '/api/v1/validate',
      { ...seat, nonce, ...this.envelopeOption() },
      true,
    );
    await this.verifyAnswer(answer, nonce, seat, 'validation');
    this.update((state) => {
      state.last_validation = { valid: answer.valid, status: answer.status, code: answer.code, checked_at: answer.checked_at };
      state.latest_signed_at = later(state.latest_signed_at, Date.parse(answer.checked_at));
    });
    return answer;
  }

  /**
   * One heartbeat, remembered for `check()`: a success as the seat's last sign of life, a released seat (a
   * LicenseServerError whose code is NOT_ACTIVATED) as `SEAT_LOST`.
   */
  async heartbeat(): Promise<HeartbeatAnswer> {
    const seat = await this.seatBody();
    const sentAt = this.now().toISOString();
    let answer: HeartbeatAnswer;
    try {
      answer = await requestJson<HeartbeatAnswer>(this.http, 'POST', '/api/v1/heartbeat', seat, true);
    } catch (err) {
      if (err instanceof LicenseServerError && SEAT_GONE.has(err.code)) {
        this.update((state) => (state.seat_lost = { code: err.code, at: this.now().toISOString() }));
      }
      throw err;
    }
    // The time the request left, not the answer's: the server refreshed the seat no earlier than that.
    if (answer.valid) this.update((state) => (state.seat_seen_at = later(state.seat_seen_at, Date.parse(sentAt))));
    return answer;
  }

  /**
   * Heartbeats until stopped: a third of the licence's timeout apart, with ±10 % jitter so a fleet does not beat in step,
   * and exponential backoff (never later than the deadline the server gave) after failures.
   */
  startHeartbeat(options: HeartbeatLoopOptions = {}): HeartbeatLoop {
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    let failures = 0;
    let deadline = Infinity;
    let resolveStopped: () => void = () => undefined;
    const stoppedPromise = new Promise<void>((resolve) => (resolveStopped = resolve));
    const stop = () => {
      if (stopped) return;
      stopped = true;
      if (timer) clearTimeout(timer);
      resolveStopped();
    };
    const schedule = (ms: number) => {
      if (!stopped) timer = setTimeout(beat, Math.max(0, ms));
    };
    const beat = () => {
      this.heartbeat().then(
        (answer) => {
          failures = 0;
          options.onBeat?.(answer);
          const timeout = answer.heartbeat_timeout_seconds ?? options.fallbackIntervalSeconds ?? 900;
          const interval = answer.heartbeat_timeout_seconds ? timeout / 3 : timeout;
          deadline = answer.next_heartbeat_before ? Date.parse(answer.next_heartbeat_before) : Infinity;
          schedule(interval * 1000 * (0.9 + Math.random() * 0.2));
        },
        (err: unknown) => {
          if (err instanceof LicenseServerError && SEAT_GONE.has(err.code)) {
            options.onSeatLost?.(err);
            stop();
            return;
          }
          options.onError?.(err);
          failures++;
          const backoff = Math.min(1000 * 2 ** failures, 300_000);
          const untilDeadline = deadline - Date.now() - 1000;
          schedule(Math.min(backoff, Math.max(untilDeadline / 2, 1000)) * (0.9 + Math.random() * 0.2));
        },
      );
    };
    schedule(0);
    return { stop, stopped: stoppedPromise };
  }

  /**
   * Asks for an update (docs/releases.md in the server's repository): the newest release above `currentVersion` this
   * licence may download, on the channel or a more stable one, with an artifact for the platform. The answer is
   * verified like a validate answer (key, signature, nonce, licence, machine); `update` is null when there is none.
   */
  async checkForUpdate(query: UpdateQuery): Promise<UpdateCheckAnswer> {
    await this.refreshKeysIfDue();
    const nonce = randomBytes(24).toString('base64url');
    const seat = await this.seatBody();
    const body = {
      ...seat,
      ...(this.options.product ? { product: this.options.product } : {}),
      ...(query.channel ? { channel: query.channel } : {}),
      platform: query.platform ?? process.platform,
      arch: query.arch ?? process.arch,
      current_version: query.currentVersion,
      nonce,
      ...this.envelopeOption(),
    };
    const answer = await requestJson<UpdateCheckAnswer>(this.http, 'POST', '/api/v1/releases/check', body, true);
    await this.verifyAnswer(answer, nonce, seat, 'update check');
    this.update((state) => (state.latest_signed_at = later(state.latest_signed_at, Date.parse(answer.checked_at))));
    return answer;
  }

  /**
   * Streams an artifact of a verified update to `target` and checks its signed size, SHA-256 and SHA-512 on the way;
   * a mismatch removes the file and throws `DIGEST_MISMATCH`. The file appears at `target` only when it is the
   * release's own.
   */
  async downloadUpdate(artifact: UpdateArtifact, target: string): Promise<string> {
    const fetchFn = this.options.fetch ?? globalThis.fetch;
    let response: Response;
    try {
      response = await fetchFn(artifact.url);
    } catch (err) {
      throw new NetworkError(`download ${artifact.filename}: ${(err as Error).message}`, { cause: err });
    }
    if (response.status !== 200 || !response.body) throw new NetworkError(`download ${artifact.filename}: answer ${response.status}`);
    const sha256 = createHash('sha256');
    const sha512 = createHash('sha512');
    let size = 0;
    const digest = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        sha256.update(chunk);
        sha512.update(chunk);
        size += chunk.length;
        done(null, chunk);
      },
    });
    const partial = join(dirname(target), `.${randomBytes(6).toString('hex')}.part`);
    try {
      await pipeline(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream), digest, createWriteStream(partial));
      if (size !== artifact.size || sha256.digest('hex') !== artifact.sha256 || sha512.digest('hex') !== artifact.sha512) {
        throw new VerificationError('DIGEST_MISMATCH', `the downloaded ${artifact.filename} is not the signed release's file`);
      }
      await rename(partial, target);
      return target;
    } catch (err) {
      await rm(partial, { force: true });
      if (err instanceof VerificationError) throw err;
      throw new NetworkError(`download ${artifact.filename}: ${(err as Error).message}`, { cause: err });
    }
  }

  /** Fetches a licence file for offline use (the machine must hold a seat), verifies it and stores it. */
  async licenseFile(): Promise<LicenseFileAnswer> {
    await this.refreshKeysIfDue();
    const body = { ...(await this.seatBody()), ...this.envelopeOption() };
    const answer = await requestJson<LicenseFileAnswer>(this.http, 'POST', '/api/v1/license-file', body, true);
    await this.storeLicenseFile(answer.license_file);
    return answer;
  }

  /** The text an air-gapped machine hands to staff, who submit it on the dashboard or the admin API. */
  async createActivationRequest(licenseKey: string, machine: MachineInfo = {}): Promise<string> {
    return armor(ACTIVATION_REQUEST_LABEL, await this.activationBody(licenseKey, machine));
  }

  /** Verifies and stores a licence file (e.g. the answer to an activation request), then checks it offline. */
  async importLicenseFile(text: string): Promise<CheckResult> {
    await this.storeLicenseFile(text);
    return this.check();
  }

  /** The offline decision from the stored state; never throws, never goes online. */
  async check(): Promise<CheckResult> {
    const loaded = this.store.load();
    if (loaded.kind === 'corrupt') return { ok: false, reason: 'STATE_CORRUPT', message: 'the state file is unreadable; activate again' };
    if (loaded.kind === 'tampered')
      return { ok: false, reason: 'STATE_TAMPERED', message: 'the state file was changed outside the client' };
    return checkOffline({
      state: loaded.state,
      keys: this.trustedKeys(loaded.state),
      withdrawnKeyIds: this.tracksServerKeys() ? (loaded.state.withdrawn_key_ids ?? []) : [],
      fingerprint: await this.fingerprint(),
      product: this.options.product,
      now: this.now(),
      clockToleranceSeconds: this.options.clockToleranceSeconds ?? 300,
      maxOfflineDays: this.options.maxOfflineDays,
    });
  }

  /**
   * With `fetchServerKeys`: fetches `/api/v1/public-keys` and replaces the stored set with it. A key trusted
   * before (pinned or fetched) that the server no longer publishes, or lists as revoked, is withdrawn: documents
   * signed by it fail with `KEY_REVOKED` (docs/signing.md, What a client pins). Returns the published key ids.
   */
  async refreshKeys(): Promise<string[]> {
    if (this.options.fetchServerKeys !== true) throw new TypeError('refreshKeys() needs fetchServerKeys: true');
    const list = await requestJson<PublicKeyList>(this.http, 'GET', '/api/v1/public-keys', undefined, true);
    const entries = Array.isArray(list?.keys) ? list.keys : [];
    const published = new KeySet();
    const revoked: string[] = [];
    for (const entry of entries) {
      try {
        const key = createPublicKey(entry.public_key_pem);
        if (entry.status === 'revoked') revoked.push(keyIdOf(key));
        else published.add(key);
      } catch {
        // a malformed entry is skipped; the others still count
      }
    }
    // An answer without a single usable key is not a key set (an error page, a half-started server): keep the old one.
    if (published.ids().length === 0) throw new VerificationError('NO_KEYS', 'the server published no usable public key');
    this.update((state) => {
      const before = [...this.pinned.ids(), ...KeySet.from([], state.server_keys).ids(), ...(state.withdrawn_key_ids ?? []), ...revoked];
      state.withdrawn_key_ids = [...new Set(before)].filter((id) => !published.has(id)).sort();
      state.server_keys = published.toJwks();
      state.server_keys_fetched_at = this.now().toISOString();
    });
    return published.ids();
  }

  /**
   * With `followEndorsements`: fetches `/api/v1/public-keys` and trusts the listed keys that an endorsement chain links
   * to a shipped key or a root key, none of them revoked; keys listed as revoked are withdrawn (docs/signing.md, Endorsed
   * rotation). Returns the ids of the keys trusted through endorsements.
   */
  async refreshEndorsedKeys(): Promise<string[]> {
    if (!this.followsEndorsements()) throw new TypeError('refreshEndorsedKeys() needs endorsed rotations (not pinToShippedKeys)');
    const list = await requestJson<PublicKeyList>(this.http, 'GET', '/api/v1/public-keys', undefined, true);
    const anchors = new Map([...this.pinned.ids(), ...this.roots.ids()].map((id) => [id, (this.pinned.get(id) ?? this.roots.get(id))!]));
    const trust = resolveTrust(anchors, listedKeys(list?.keys));
    const endorsed = new KeySet();
    for (const key of trust.endorsed.values()) endorsed.add(key);
    this.update((state) => {
      state.endorsed_keys = endorsed.toJwks();
      state.withdrawn_key_ids = [...new Set([...(state.withdrawn_key_ids ?? []), ...trust.revoked])].sort();
      state.server_keys_fetched_at = this.now().toISOString();
    });
    return endorsed.ids();
  }

  /** With `fetchServerKeys`, refreshes a key set older than `keyRefreshIntervalSeconds`; a failed refresh keeps the old one. */
  private async refreshKeysIfDue(): Promise<void> {
    if (this.options.fetchServerKeys !== true) return;
    const fetchedAt = Date.parse(this.store.load().state.server_keys_fetched_at ?? '');
    const interval = (this.options.keyRefreshIntervalSeconds ?? 3600) * 1000;
    if (!Number.isNaN(fetchedAt) && this.now().getTime() - fetchedAt < interval && this.now().getTime() >= fetchedAt) return;
    await this.refreshKeys().catch(() => undefined);
  }

  private async storeLicenseFile(text: string): Promise<void> {
    const document = parseLicenseFile(text);
    if (!document) throw new VerificationError('MALFORMED_ENVELOPE', 'not a licence file');
    if (this.options.envelopes === true && document.envelope === undefined) {
      throw new VerificationError('UNSUPPORTED_FORMAT', 'a version 1 licence file (no envelope)');
    }
    const license = await this.verifyOnline(document, document.envelope?.key_id);
    if (license.machine_fingerprint !== (await this.fingerprint())) {
      throw new VerificationError('FINGERPRINT_MISMATCH', 'the licence file was issued to another machine');
    }
    this.update((state) => {
      state.license_file = text;
      delete state.last_validation;
      state.latest_signed_at = later(state.latest_signed_at, signedTimeOf(license));
    });
  }

  /** Verifies a signed licence from the server, fetching the server's keys once if it names a key not yet known. */
  private async verifyOnline(document: SignedLicense, keyId: unknown = document.envelope?.key_id ?? document.license?.key_id) {
    if (this.options.envelopes === true && document.envelope === undefined) {
      throw new VerificationError('MALFORMED_ENVELOPE', 'the server sent no envelope (a server older than envelopes?)');
    }
    const verified = verifyDocument(document, await this.keysFor(keyId), this.withdrawn());
    if (!verified.ok) throw new VerificationError(verified.reason, verified.message);
    return verified.license;
  }

  private async keysFor(keyId: unknown): Promise<KeySet> {
    const loaded = this.store.load();
    let keys = this.trustedKeys(loaded.state);
    if (!keys.has(keyId) && this.options.fetchServerKeys === true) {
      await this.refreshKeys();
      keys = this.trustedKeys(this.store.load().state);
    }
    if (!keys.has(keyId) && this.followsEndorsements()) {
      // Offline or a failed fetch: decide with the keys already trusted (the answer is then UNKNOWN_KEY).
      await this.refreshEndorsedKeys().catch(() => undefined);
      keys = this.trustedKeys(this.store.load().state);
    }
    return keys;
  }

  private trustedKeys(state: ClientState): KeySet {
    if (!this.tracksServerKeys()) return this.pinned;
    const fetched = this.options.fetchServerKeys === true ? KeySet.from([], state.server_keys) : new KeySet();
    const endorsed = this.followsEndorsements() ? KeySet.from([], state.endorsed_keys) : new KeySet();
    return this.pinned
      .merge(fetched)
      .merge(endorsed)
      .without(state.withdrawn_key_ids ?? []);
  }

  /** Whether the client learns keys (and revocations) from the server at all. */
  private tracksServerKeys(): boolean {
    return this.options.fetchServerKeys === true || this.followsEndorsements();
  }

  /** Endorsed rotations are followed unless the application pins its shipped keys (docs/clients.md, Trust). */
  private followsEndorsements(): boolean {
    return this.options.pinToShippedKeys !== true && this.options.followEndorsements !== false;
  }

  private withdrawn(): string[] {
    return this.tracksServerKeys() ? (this.store.load().state.withdrawn_key_ids ?? []) : [];
  }

  private envelopeOption(): { envelope?: true } {
    return this.options.envelopes === true ? { envelope: true } : {};
  }

  private async seatBody(): Promise<{ license_key: string; machine_fingerprint: string }> {
    const state = this.store.load().state;
    const stored = parseLicenseFile(state.license_file ?? '')?.license ?? state.activation?.license;
    if (!stored) throw new LicenseServerError('NOT_ACTIVATED', 400, 'this machine has no stored licence; activate first');
    return { license_key: stored.license_key, machine_fingerprint: await this.fingerprint() };
  }

  private async activationBody(licenseKey: string, machine: MachineInfo) {
    return {
      license_key: licenseKey,
      ...(await this.machineBody(machine)),
      ...(this.options.product ? { product: this.options.product } : {}),
    };
  }

  /** What activation and trials send about this machine. */
  private async machineBody(machine: MachineInfo) {
    return {
      machine_fingerprint: await this.fingerprint(),
      hostname: machine.hostname ?? osHostname(),
      os: machine.os ?? `${platform()} ${release()}`,
      ...(machine.appVersion ? { app_version: machine.appVersion } : {}),
      ...this.envelopeOption(),
    };
  }

  /** Read, change, write atomically. A corrupt or tampered file is replaced by a fresh state. */
  private update(change: (state: ClientState) => void): void {
    const loaded = this.store.load();
    const state = loaded.kind === 'ok' ? loaded.state : { version: 1 as const };
    change(state);
    this.store.save(state);
  }
}

const SEAT_GONE = new Set(['NOT_ACTIVATED', 'INVALID_KEY']);

/** The key id a pool file's envelope names, to fetch endorsed keys for (undefined for anything else). */
function poolEnvelopeKeyId(poolFile: unknown): unknown {
  const file = dearmor(RELAY_POOL_LABEL, poolFile) as { envelope?: { key_id?: unknown } } | undefined;
  return file?.envelope?.key_id;
}

function later(stored: string | undefined, candidate: number): string | undefined {
  const current = stored ? Date.parse(stored) : -Infinity;
  const best = Math.max(Number.isNaN(current) ? -Infinity : current, Number.isFinite(candidate) ? candidate : -Infinity);
  return Number.isFinite(best) ? new Date(best).toISOString() : stored;
}
