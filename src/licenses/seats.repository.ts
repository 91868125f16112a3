import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import { Activation, ReleaseReason } from './activation.entity';

/** Activation records ("seats"). A seat is current while released_at is null. */
@Injectable()
export class SeatsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private repo(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(Activation);
  }

  /** Current seats, most recent binding first. */
  listCurrent(licenseId: number, manager?: EntityManager): Promise<Activation[]> {
    return this.repo(manager).find({ where: { licenseId, releasedAt: IsNull() }, order: { activatedAt: 'DESC', id: 'DESC' } });
  }

  findCurrent(licenseId: number, machineFingerprint: string, manager?: EntityManager): Promise<Activation | null> {
    return this.repo(manager).findOne({ where: { licenseId, machineFingerprint, releasedAt: IsNull() } });
  }

  /** Every record, current and past, newest first. */
  listHistory(licenseId: number, manager?: EntityManager): Promise<Activation[]> {
    return this.repo(manager).find({ where: { licenseId }, order: { activatedAt: 'DESC', id: 'DESC' } });
  }

  insert(seat: Partial<Activation>, manager: EntityManager): Promise<Activation> {
    return this.repo(manager).save(this.repo(manager).create(seat));
  }

  /** Releases the current seat of one fingerprint, or all current seats; returns the released records. */
  async release(licenseId: number, machineFingerprint: string | undefined, reason: ReleaseReason, manager: EntityManager): Promise<Activation[]> {
    const qb = manager
      .createQueryBuilder()
      .update(Activation)
      .set({ releasedAt: () => 'now()', releaseReason: reason })
      .where('license_id = :licenseId AND released_at IS NULL', { licenseId });
    if (machineFingerprint !== undefined) qb.andWhere('machine_fingerprint = :machineFingerprint', { machineFingerprint });
    const result = await qb.returning('*').execute();
    return (result.raw as Record<string, unknown>[]).map((row) => this.repo(manager).create(rowToActivation(row)));
  }

  /** A machine activating again: refreshes last_seen_at and what it reports about itself; activated_at stays. */
  async refresh(seatId: string, reported: Pick<Activation, 'hostname' | 'os' | 'appVersion' | 'ip'>, manager: EntityManager): Promise<Activation> {
    const result = await manager
      .createQueryBuilder()
      .update(Activation)
      .set({ lastSeenAt: () => 'now()', hostname: reported.hostname, os: reported.os, appVersion: reported.appVersion, ip: reported.ip })
      .where('id = :seatId', { seatId })
      .returning('*')
      .execute();
    return this.repo(manager).create(rowToActivation((result.raw as Record<string, unknown>[])[0]));
  }

  /** Refreshes last_seen_at only when older than `minIntervalSeconds`, so frequent validations do not write every time. */
  async touchLastSeen(seatId: string, minIntervalSeconds: number, manager?: EntityManager): Promise<void> {
    await (manager ?? this.dataSource.manager).query(
      `UPDATE activations SET last_seen_at = now() WHERE id = $1 AND last_seen_at < now() - make_interval(secs => $2)`,
      [seatId, minIntervalSeconds],
    );
  }
}

function rowToActivation(row: Record<string, unknown>): Partial<Activation> {
  return {
    id: String(row.id),
    licenseId: row.license_id as number,
    machineFingerprint: row.machine_fingerprint as string,
    hostname: row.hostname as string | null,
    os: row.os as string | null,
    appVersion: row.app_version as string | null,
    ip: row.ip as string | null,
    activatedAt: row.activated_at as Date,
    lastSeenAt: row.last_seen_at as Date,
    releasedAt: row.released_at as Date | null,
    releaseReason: row.release_reason as ReleaseReason | null,
  };
}
