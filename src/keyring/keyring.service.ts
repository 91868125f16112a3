import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { createPublicKey, type KeyObject } from 'node:crypto';
import { EventRecorder } from '../events/event-recorder';
import type { Actor } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import { ErrorCode } from '../common/errors/error-codes';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { ConfigError } from '../config/config.error';
import { algorithmOfKey, signEndorsement, SigningAlgorithm, verifyEndorsement } from '../signing/envelope';
import { publicJwkOf, SigningJwk } from '../signing/jwk';
import { keyIdOf } from '../signing/license-signature';
import { generateSigningKey, readSigningKeyFile, SigningKey } from './signing-key';
import { KeyEncryption, KeyringDecryptionError } from './key-encryption';
import { KeyringRepository } from './keyring.repository';
import { KeyEndorsement, SigningKeyOrigin, SigningKeyStatus, StoredSigningKey } from './signing-key.entity';

/** How often each instance reads the keyring's version: a rotation elsewhere reaches it within this (docs/signing.md, The keyring: within 5 s). */
export const KEYRING_REFRESH_MS = 1000;

/** The key this instance signs with now: sign with it and name it in the payload, so key_id and signature always agree. */
export interface ActiveSigningKey {
  keyId: string;
  privateKey: KeyObject;
  publicKeyPem: string;
  algorithm: SigningAlgorithm;
}

/**
 * A published key: the active one and the retired ones verify; revoked ones stay listed as `revoked` so that clients drop
 * them (docs/signing.md, Endorsed rotation).
 */
export interface PublishedKey {
  keyId: string;
  algorithm: SigningAlgorithm;
  status: SigningKeyStatus;
  publicKeyPem: string;
  createdAt: Date;
  retiredAt: Date | null;
  endorsements: KeyEndorsement[];
}

/** A JWK of the JWK Set with the key's state and endorsements beside the RFC 7517 members. */
export type PublishedJwk = SigningJwk & { status: SigningKeyStatus; endorsements: KeyEndorsement[] };

/** An endorsement made offline (licence-server endorse-key): the endorsing key's public half and its signature. */
export interface OfflineEndorsement {
  publicKeyPem: string;
  signature: string;
}

interface KeyringSnapshot {
  version: string;
  active: ActiveSigningKey;
  published: PublishedKey[];
  jwks: PublishedJwk[];
}

/** The same string as KeyringRepository.version() computes in SQL (key ids are hex, so code-unit order is the "C" collation). */
const versionOf = (keys: StoredSigningKey[]) =>
  keys
    .map((k) => `${k.keyId}:${k.status}:${k.endorsements.length}`)
    .sort()
    .join(',');

const STATUS_ORDER: Record<SigningKeyStatus, number> = { active: 0, retired: 1, revoked: 2 };

/**
 * The keyring (docs/signing.md, The keyring): keys in PostgreSQL, shared by every instance, private halves encrypted under KEYRING_SECRET.
 * Each process keeps the active key's KeyObject and the published keys in memory and polls a one-row version read every
 * second off the request path, so a rotation on any instance is used everywhere within about a second and no request
 * ever waits for a keyring read.
 */
@Injectable()
export class KeyringService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(KeyringService.name);
  private readonly encryption: KeyEncryption;
  private snapshot?: KeyringSnapshot;
  // Reloads run one after another, so a slow poll that read before a rotation never overwrites the rotation's reload.
  private reloads: Promise<void> = Promise.resolve();
  private polling = false;
  private pollFailing = false;
  private undecryptable?: string;
  private timer?: NodeJS.Timeout;
  /** Set when this start created the keyring's first key (main.ts reports it). */
  firstKey?: { keyId: string; origin: SigningKeyOrigin };

  constructor(
    private readonly keys: KeyringRepository,
    private readonly events: EventRecorder,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.encryption = new KeyEncryption(config.keyringSecret);
  }

  async onModuleInit(): Promise<void> {
    await this.ensureFirstKey();
    await this.reload(true);
    this.startRefresh();
  }

  onModuleDestroy(): void {
    this.stopRefresh();
  }

  /** Polls the keyring's version for rotations made by other instances (again, after `stopRefresh`). */
  startRefresh(): void {
    clearInterval(this.timer);
    this.timer = setInterval(() => void this.poll(), KEYRING_REFRESH_MS);
    this.timer.unref();
  }

  stopRefresh(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  activeKey(): ActiveSigningKey {
    return this.current().active;
  }

  /** The active key first, then the retired ones, newest first. */
  publishedKeys(): PublishedKey[] {
    return this.current().published;
  }

  /** The keys that verify today (active and retired, never revoked) as RFC 7517 JWKs, in the same order. */
  jwks(): PublishedJwk[] {
    return this.current().jwks;
  }

  /** Every key with its state, revoked ones included (admin). */
  listKeys(): Promise<StoredSigningKey[]> {
    return this.keys.listAll();
  }

  /**
   * A new key of `algorithm` becomes active, the previous one retired (its private key erased) after it endorsed the new
   * key (docs/signing.md, Endorsed rotation); audited in the same transaction.
   */
  async rotate(actor: Actor, algorithm: SigningAlgorithm = 'RSA-SHA256'): Promise<StoredSigningKey> {
    const key = await generateSigningKey(algorithm);
    const created = await this.keys.transaction(async (manager) => {
      const previous = await this.keys.getActive(manager);
      const endorsements: KeyEndorsement[] = [];
      if (previous?.privateKeyEncrypted) {
        const outgoing = this.encryption.decrypt(previous.privateKeyEncrypted, previous.keyId);
        endorsements.push({ key_id: previous.keyId, signature: signEndorsement(createPublicKey(key.privateKey), outgoing) });
      }
      if (previous) await this.keys.retire(previous.keyId, manager);
      const row = await this.keys.insert({ ...this.newRow(key, 'generated'), endorsements }, manager);
      await this.events.record(manager, {
        type: 'signing_key.rotated',
        actor,
        details: { key_id: row.keyId, previous_key_id: previous?.keyId ?? null },
      });
      return row;
    });
    await this.reload(false);
    return created;
  }

  /** A retired key is withdrawn: no longer published, so nothing it signed verifies any more. The active key cannot be. */
  async revoke(keyId: string, actor: Actor, reason?: string): Promise<StoredSigningKey> {
    const revoked = await this.keys.transaction(async (manager) => {
      const key = await this.keys.getByKeyId(keyId, manager);
      if (!key) throw AppError.notFound('Signing key');
      if (key.status === 'active') {
        throw AppError.conflict('The active signing key cannot be revoked: rotate first, then revoke the retired key', { key_id: keyId });
      }
      if (key.status === 'revoked')
        throw AppError.conflict('This signing key is already revoked', { key_id: keyId }, ErrorCode.ALREADY_REVOKED);
      const row = await this.keys.revoke(keyId, manager);
      await this.events.record(manager, { type: 'signing_key.revoked', actor, details: { key_id: keyId, reason: reason ?? null } });
      return row;
    });
    await this.reload(false);
    return revoked;
  }

  /**
   * Stores an endorsement of a key made offline by another key (an offline root): it must verify for this key, and a
   * revoked key is endorsed no more. The same endorser again replaces its earlier endorsement.
   */
  async endorse(keyId: string, offline: OfflineEndorsement, actor: Actor): Promise<StoredSigningKey> {
    let endorser: KeyObject;
    try {
      endorser = createPublicKey(offline.publicKeyPem);
    } catch {
      throw AppError.field('public_key_pem', 'public_key_pem must be a PEM public key (SubjectPublicKeyInfo)');
    }
    if (endorser.type !== 'public' || !algorithmOfKey(endorser))
      throw AppError.field('public_key_pem', 'public_key_pem must be an RSA or Ed25519 public key');
    const endorserId = keyIdOf(endorser);
    if (endorserId === keyId) throw AppError.field('public_key_pem', 'a key cannot endorse itself');
    const endorsed = await this.keys.transaction(async (manager) => {
      const key = await this.keys.getByKeyId(keyId, manager);
      if (!key) throw AppError.notFound('Signing key');
      if (key.status === 'revoked')
        throw AppError.conflict('A revoked signing key cannot be endorsed', { key_id: keyId }, ErrorCode.ALREADY_REVOKED);
      if (!verifyEndorsement(createPublicKey(key.publicKeyPem), offline.signature, endorser)) {
        throw AppError.field(
          'signature',
          `signature is not an endorsement of key ${keyId} by key ${endorserId} (licence-server endorse-key makes one)`,
        );
      }
      const endorsements = [
        ...key.endorsements.filter((e) => e.key_id !== endorserId),
        { key_id: endorserId, signature: offline.signature },
      ];
      const row = await this.keys.setEndorsements(keyId, endorsements, manager);
      await this.events.record(manager, { type: 'signing_key.endorsed', actor, details: { key_id: keyId, endorser_key_id: endorserId } });
      return row;
    });
    await this.reload(false);
    return endorsed;
  }

  private current(): KeyringSnapshot {
    if (!this.snapshot) throw new Error('the keyring is not loaded yet');
    return this.snapshot;
  }

  /**
   * First start of a deployment: import SIGNING_KEY_FILE (existing deployments keep their key_id) or generate a key.
   * Only ever when the keyring is empty, under the keyring's advisory lock, so instances starting together create one key.
   */
  private async ensureFirstKey(): Promise<void> {
    if ((await this.keys.version()) !== '') return;
    const fromFile = readSigningKeyFile(this.config.signingKeyFile);
    const key = fromFile ?? (await generateSigningKey());
    const origin: SigningKeyOrigin = fromFile ? 'imported' : 'generated';
    await this.keys.transaction(async (manager) => {
      if ((await this.keys.count(manager)) > 0) return;
      await this.keys.insert(this.newRow(key, origin), manager);
      this.firstKey = { keyId: key.keyId, origin };
    });
    if (this.firstKey) this.logger.log(`Keyring created with the ${origin} key ${key.keyId}`);
  }

  private newRow(key: SigningKey, origin: SigningKeyOrigin) {
    return {
      keyId: key.keyId,
      algorithm: key.algorithm,
      endorsements: [] as KeyEndorsement[],
      status: 'active' as const,
      publicKeyPem: key.publicKeyPem,
      privateKeyEncrypted: this.encryption.encrypt(key.privateKey, key.keyId),
      origin,
    };
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const version = await this.keys.version();
      if (version !== this.snapshot?.version) await this.reload(false);
      if (this.pollFailing) this.logger.log('Keyring refresh works again');
      this.pollFailing = false;
    } catch (err) {
      // The database is down: keep signing with the cached key; say so once, not every second.
      if (!this.pollFailing) this.logger.warn(`Keyring refresh failed, signing with the cached key: ${(err as Error).message}`);
      this.pollFailing = true;
    } finally {
      this.polling = false;
    }
  }

  private reload(atStartUp: boolean): Promise<void> {
    const next = this.reloads.then(() => this.load(atStartUp));
    this.reloads = next.catch(() => undefined);
    return next;
  }

  private async load(atStartUp: boolean): Promise<void> {
    const rows = await this.keys.listAll();
    const stored = rows.find((k) => k.status === 'active');
    if (!stored?.privateKeyEncrypted) throw new Error('the keyring has no active key');
    let active = this.snapshot?.active;
    if (active?.keyId !== stored.keyId) {
      try {
        active = {
          keyId: stored.keyId,
          publicKeyPem: stored.publicKeyPem,
          algorithm: stored.algorithm,
          privateKey: this.encryption.decrypt(stored.privateKeyEncrypted, stored.keyId),
        };
      } catch (err) {
        if (!(err instanceof KeyringDecryptionError)) throw err;
        const message =
          `KEYRING_SECRET does not decrypt the active signing key ${stored.keyId} stored in the database. Start every instance with ` +
          `the KEYRING_SECRET this keyring was created with (DATA_DIR/keyring-secret when it was generated); no new key is created.`;
        if (atStartUp) throw new ConfigError(message);
        // Another instance rotated with a different secret: keep signing with the previous key (it stays published).
        if (this.undecryptable !== stored.keyId) this.logger.error(message);
        this.undecryptable = stored.keyId;
        return;
      }
    }
    const published: PublishedKey[] = [...rows]
      .sort((a, b) => STATUS_ORDER[a.status] - STATUS_ORDER[b.status] || b.createdAt.getTime() - a.createdAt.getTime())
      .map((k) => ({
        keyId: k.keyId,
        algorithm: k.algorithm,
        status: k.status,
        publicKeyPem: k.publicKeyPem,
        createdAt: k.createdAt,
        retiredAt: k.retiredAt,
        endorsements: k.endorsements,
      }));
    // Only keys that verify today: a generic JOSE consumer of the JWK Set must never trust a revoked key (docs/signing.md, The JWK Set).
    const jwks = await Promise.all(
      published
        .filter((k) => k.status !== 'revoked')
        .map(async (k) => ({ ...(await publicJwkOf(k.publicKeyPem, k.keyId)), status: k.status, endorsements: k.endorsements })),
    );
    this.snapshot = { version: versionOf(rows), active, published, jwks };
  }
}
