import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { isProcessRunning } from '../database/processes';

/** One machine's lease as the relay stores it. */
export interface StoredLease {
  lease_id: string;
  machine_fingerprint: string;
  hostname: string | null;
  issued_at: string;
  expires_at: string;
}

interface LeaseFile {
  version: 1;
  pool_id: string;
  leases: StoredLease[];
}

export type LeaseOutcome =
  { kind: 'created' | 'renewed'; lease: StoredLease } | { kind: 'full' } | { kind: 'none' } | { kind: 'released'; lease: StoredLease };

/**
 * The relay's leases (docs/relay.md, Storage): one JSON file in the data folder, replaced atomically on every change
 * (written to a temporary file, flushed to disk, renamed over the old one, the folder flushed) before the answer is
 * sent. A `kill -9` at any moment leaves the old file or the new one, never half of one; and no machine holds a lease
 * the file does not, so after a restart no seat is lent twice and none is lost. One relay process owns the folder
 * (relay.lock holds its pid), and inside it every change runs one at a time, so the seat count is read and written
 * with nothing in between.
 */
export class LeaseStore {
  private state: LeaseFile;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly file: string;

  private constructor(
    private readonly dir: string,
    poolId: string,
    private readonly seats: number,
  ) {
    this.file = join(dir, 'leases.json');
    const stored = existsSync(this.file) ? (JSON.parse(readFileSync(this.file, 'utf8')) as LeaseFile) : undefined;
    this.state = { version: 1, pool_id: poolId, leases: stored?.leases ?? [] };
    // A renewed pool (same relay, new pool_id) keeps the machines that hold leases, oldest first, up to its seats.
    if (stored && stored.pool_id !== poolId) this.state.leases = this.state.leases.slice(0, seats);
  }

  /** Opens the folder's store, taking its lock: refused while another live process holds it. */
  static open(dir: string, poolId: string, seats: number): LeaseStore {
    takeLock(dir);
    const store = new LeaseStore(dir, poolId, seats);
    store.write();
    return store;
  }

  /** Leases live at `now` (expired ones are free seats, whether or not a change has dropped them yet). */
  live(now: Date): StoredLease[] {
    return this.state.leases.filter((l) => Date.parse(l.expires_at) > now.getTime());
  }

  /** Lends a seat to the machine, or renews its live lease (same lease_id); `full` when every seat is lent. */
  lease(fingerprint: string, hostname: string | null, now: Date, expiresAt: Date): Promise<LeaseOutcome> {
    return this.change(now, (leases) => {
      const own = leases.find((l) => l.machine_fingerprint === fingerprint);
      if (own) return { kind: 'renewed', lease: renew(own, now, expiresAt, hostname) };
      if (leases.length >= this.seats) return { kind: 'full' };
      const lease: StoredLease = {
        lease_id: randomUUID(),
        machine_fingerprint: fingerprint,
        hostname,
        issued_at: now.toISOString(),
        expires_at: expiresAt.toISOString(),
      };
      leases.push(lease);
      return { kind: 'created', lease };
    });
  }

  /** Renews the machine's live lease; `none` when it has none (expired leases are gone). */
  heartbeat(fingerprint: string, now: Date, expiresAt: Date): Promise<LeaseOutcome> {
    return this.change(now, (leases) => {
      const own = leases.find((l) => l.machine_fingerprint === fingerprint);
      return own ? { kind: 'renewed', lease: renew(own, now, expiresAt) } : { kind: 'none' };
    });
  }

  release(fingerprint: string, now: Date): Promise<LeaseOutcome> {
    return this.change(now, (leases) => {
      const index = leases.findIndex((l) => l.machine_fingerprint === fingerprint);
      if (index < 0) return { kind: 'none' };
      const [lease] = leases.splice(index, 1);
      return { kind: 'released', lease };
    });
  }

  close(): void {
    try {
      unlinkSync(join(this.dir, LOCK_FILE));
    } catch {
      // already gone
    }
  }

  /** One change at a time: drop expired leases, decide, and write the file before anyone hears the answer. */
  private change(now: Date, decide: (leases: StoredLease[]) => LeaseOutcome): Promise<LeaseOutcome> {
    const run = this.queue.then(() => {
      const leases = this.live(now).map((l) => ({ ...l }));
      const outcome = decide(leases);
      const before = this.state;
      this.state = { ...before, leases };
      try {
        this.write();
      } catch (err) {
        this.state = before;
        throw err;
      }
      return outcome;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private write(): void {
    const temporary = `${this.file}.tmp`;
    const fd = openSync(temporary, 'w', 0o600);
    try {
      writeSync(fd, JSON.stringify(this.state));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, this.file);
    const dirFd = openSync(this.dir, 'r');
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  }
}

function renew(lease: StoredLease, now: Date, expiresAt: Date, hostname?: string | null): StoredLease {
  lease.issued_at = now.toISOString();
  lease.expires_at = expiresAt.toISOString();
  if (hostname) lease.hostname = hostname;
  return lease;
}

const LOCK_FILE = 'relay.lock';

/** relay.lock names the pid of the relay using the folder; a lock whose process is gone (a kill -9) is taken over. */
function takeLock(dir: string): void {
  const lock = join(dir, LOCK_FILE);
  if (existsSync(lock)) {
    const pid = Number(readFileSync(lock, 'utf8').trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isProcessRunning(pid))
      throw new Error(`another relay (pid ${pid}) is using ${dir}`);
  }
  writeFileSync(lock, `${process.pid}\n`, { mode: 0o600 });
}
