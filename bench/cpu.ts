import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/**
 * CPU time (user + system) of processes, read from /proc, to split each request's cost between the
 * server, PostgreSQL and the load generator. Linux only: elsewhere every reading is undefined.
 */
export const TICK_US = 10_000; // USER_HZ is 100 on Linux

/** The fields of /proc/<pid>/stat after the command name: [0] is field 3 (state), [1] ppid, [11] utime, [12] stime. */
export function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

function ticksOf(pid: number): number {
  const fields = statFields(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  return Number(fields[11]) + Number(fields[12]);
}

/** CPU microseconds used so far, per process id, by the processes a meter watches. */
export type CpuMeter = () => Map<number, number> | undefined;

const processIds = () => readdirSync('/proc').filter((d) => /^\d+$/.test(d));

/**
 * A process and all its descendants (the server's node:cluster workers, WEB_CONCURRENCY): each reading walks
 * /proc, so workers that a restart replaces are counted from when they appear.
 */
export function processTreeCpu(root: number): CpuMeter {
  return () => {
    let pids: string[];
    try {
      pids = processIds();
    } catch {
      return undefined;
    }
    const children = new Map<number, number[]>();
    const ticks = new Map<number, number>();
    for (const pid of pids) {
      try {
        const fields = statFields(readFileSync(`/proc/${pid}/stat`, 'utf8'));
        const parent = Number(fields[1]);
        children.set(parent, [...(children.get(parent) ?? []), Number(pid)]);
        ticks.set(Number(pid), Number(fields[11]) + Number(fields[12]));
      } catch {
        // gone meanwhile
      }
    }
    if (!ticks.has(root)) return undefined;
    const used = new Map<number, number>();
    for (const queue = [root]; queue.length;) {
      const pid = queue.pop() as number;
      used.set(pid, (ticks.get(pid) ?? 0) * TICK_US);
      queue.push(...(children.get(pid) ?? []));
    }
    return used;
  };
}

/** Every PostgreSQL backend serving `database` (their command line names it); they come and go with the pool. */
export function postgresCpu(database: string): CpuMeter {
  return () => {
    const used = new Map<number, number>();
    let dirs: string[];
    try {
      dirs = processIds();
    } catch {
      return undefined;
    }
    for (const pid of dirs) {
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        if (cmdline.startsWith('postgres: ') && cmdline.includes(` ${database} `)) used.set(Number(pid), ticksOf(Number(pid)) * TICK_US);
      } catch {
        // gone meanwhile
      }
    }
    return used;
  };
}

/** CPU used between two readings: processes that started meanwhile count from zero, those that ended are lost. */
function usedBetween(before: Map<number, number> | undefined, after: Map<number, number> | undefined): number | undefined {
  if (!before || !after) return undefined;
  let total = 0;
  for (const [pid, us] of after) total += us - (before.get(pid) ?? 0);
  return total;
}

/** CPU a meter's processes used since `cpuTally` was called, for work the caller times itself (the `deliver` row). */
export interface CpuTally {
  /** Keeps every watched process's latest reading; call it now and then while the work runs. */
  sample(): void;
  /** µs used since the start, every process's latest reading counted (sampled once more first). */
  usedUs(): number | undefined;
}

/**
 * A meter read at the start and then sampled: each process counts up to its latest reading, so a PostgreSQL backend
 * that exits (the pool closes idle connections) loses only the time since the last sample. A sum of the readings'
 * totals would fall instead, and read negative, whenever a backend ended between the first reading and the last.
 */
export function cpuTally(meter: CpuMeter): CpuTally {
  const first = meter();
  const latest = new Map(first);
  const sample = () => {
    for (const [pid, us] of meter() ?? []) latest.set(pid, us);
  };
  return {
    sample,
    usedUs: () => {
      sample();
      return usedBetween(first, latest);
    },
  };
}

/** This process (autocannon and the paced runner run here). */
const benchProcessCpu = (): number => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};

export interface CpuMeters {
  server: CpuMeter;
  database: CpuMeter;
  /** PostgreSQL statements the server's processes have sent so far, by pid (bench/statement-counter.ts). */
  statements?: CpuMeter;
}

export interface CpuPerRequest {
  serverUs?: number;
  databaseUs?: number;
  loadGeneratorUs?: number;
  /** The load generator's CPU over the run as a share of the whole machine's (all cores), in per cent. */
  loadGeneratorShare?: number;
  /** PostgreSQL statements (round trips) the server sent per request, background work included. */
  statements?: number;
}

/**
 * Starts a reading; the returned function gives the µs per request since then. The load generator is this
 * process unless `generator` gives what an external one (wrk) reported it used over the run.
 */
export function startCpu(
  meters: CpuMeters | undefined,
): (requests: number, elapsedSeconds: number, generator?: { us: number }) => CpuPerRequest {
  const read = () => ({
    server: meters?.server(),
    database: meters?.database(),
    statements: meters?.statements?.(),
    bench: benchProcessCpu(),
  });
  const before = read();
  return (requests, elapsedSeconds, generator) => {
    const after = read();
    const perRequest = (used: number | undefined, digits = 0) =>
      used === undefined || requests === 0 ? undefined : Math.round((used / requests) * 10 ** digits) / 10 ** digits;
    const generatorUs = generator?.us ?? after.bench - before.bench;
    return {
      serverUs: perRequest(usedBetween(before.server, after.server)),
      databaseUs: perRequest(usedBetween(before.database, after.database)),
      loadGeneratorUs: perRequest(generatorUs),
      statements: perRequest(usedBetween(before.statements, after.statements), 2),
      loadGeneratorShare:
        elapsedSeconds > 0 ? Math.round((generatorUs / (elapsedSeconds * 1e6 * availableParallelism())) * 1000) / 10 : undefined,
    };
  };
}
