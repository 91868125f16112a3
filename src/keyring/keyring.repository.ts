import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { lockForTransaction } from '../database/advisory-lock';
import { KeyEndorsement, StoredSigningKey } from './signing-key.entity';

// pg_advisory_xact_lock key for every keyring change: first-start import, rotation and revocation run one at a time.
const KEYRING_LOCK = 7_340_117_001;

/**
 * The keyring's keys (signing_keys). Style: TypeORM's repository API on the StoredSigningKey entity (docs/architecture.md,
 * Database style): a handful of rows read and written by key; changes run under one advisory lock.
 */
@Injectable()
export class KeyringRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private repo(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(StoredSigningKey);
  }

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      await lockForTransaction(manager, KEYRING_LOCK);
      return work(manager);
    });
  }

  /**
   * Every key's id and state in one short string: the cheap read each instance polls to see a rotation or revocation
   * (a keyring holds a handful of keys, read without their key material).
   */
  async version(): Promise<string> {
    const keys = await this.repo().find({ select: { keyId: true, status: true, endorsements: true } });
    return keys
      .map((key) => `${key.keyId}:${key.status}:${key.endorsements.length}`)
      .sort()
      .join(',');
  }

  /** All keys, newest first (the admin list). */
  listAll(manager?: EntityManager): Promise<StoredSigningKey[]> {
    return this.repo(manager).find({ order: { createdAt: 'DESC', keyId: 'ASC' } });
  }

  count(manager: EntityManager): Promise<number> {
    return this.repo(manager).count();
  }

  getActive(manager?: EntityManager): Promise<StoredSigningKey | null> {
    return this.repo(manager).findOneBy({ status: 'active' });
  }

  getByKeyId(keyId: string, manager?: EntityManager): Promise<StoredSigningKey | null> {
    return this.repo(manager).findOneBy({ keyId });
  }

  async insert(key: Omit<StoredSigningKey, 'createdAt' | 'retiredAt' | 'revokedAt'>, manager: EntityManager): Promise<StoredSigningKey> {
    await this.repo(manager).insert(key);
    return (await this.getByKeyId(key.keyId, manager)) as StoredSigningKey;
  }

  /** Active → retired: the private key is erased, the public key stays published. */
  async retire(keyId: string, manager: EntityManager): Promise<void> {
    await this.repo(manager).update(
      { keyId, status: 'active' },
      { status: 'retired', privateKeyEncrypted: null, retiredAt: () => 'now()' },
    );
  }

  async setEndorsements(keyId: string, endorsements: KeyEndorsement[], manager: EntityManager): Promise<StoredSigningKey> {
    await this.repo(manager).update({ keyId }, { endorsements });
    return (await this.getByKeyId(keyId, manager)) as StoredSigningKey;
  }

  async revoke(keyId: string, manager: EntityManager): Promise<StoredSigningKey> {
    await this.repo(manager).update({ keyId, status: 'retired' }, { status: 'revoked', revokedAt: () => 'now()' });
    return (await this.getByKeyId(keyId, manager)) as StoredSigningKey;
  }
}
