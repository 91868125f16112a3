import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time (user + system) of processes, read from /proc, to split each request's cost between the
 * server, PostgreSQL and the load generator. Linux only: elsewhere every reading is undefined.
 */
const TICK_US = 10_000; // USER_HZ is 100 on Linux

function ticksOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** CPU microseconds used so far, per process id, by the processes a meter watches. */
export type CpuMeter = () => Map<number, number> | undefined;

export function processCpu(pid: number): CpuMeter {
  return () => {
    try {
      return new Map([[pid, ticksOf(pid) * TICK_US]]);
    } catch {
      return undefined;
    }
  };
}

/** Every PostgreSQL backend serving `database` (their command line names it); they come and go with the pool. */
export function postgresCpu(database: string): CpuMeter {
  return () => {
    const used = new Map<number, number>();
    let dirs: string[];
    try {
      dirs = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
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

/** This process (autocannon runs here). */
const loadGeneratorCpu: CpuMeter = () => {
  const usage = process.cpuUsage();
  return new Map([[process.pid, usage.user + usage.system]]);
};

export interface CpuMeters {
  server: CpuMeter;
  database: CpuMeter;
}

export interface CpuPerRequest {
  serverUs?: number;
  databaseUs?: number;
  loadGeneratorUs?: number;
}

/** Starts a reading; the returned function gives the µs per request since then. */
export function startCpu(meters: CpuMeters | undefined): (requests: number) => CpuPerRequest {
  const read = () => ({ server: meters?.server(), database: meters?.database(), load: loadGeneratorCpu() });
  const before = read();
  return (requests) => {
    const after = read();
    const per = (a?: Map<number, number>, b?: Map<number, number>) => {
      const used = usedBetween(a, b);
      return used === undefined || requests === 0 ? undefined : Math.round(used / requests);
    };
    return {
      serverUs: per(before.server, after.server),
      databaseUs: per(before.database, after.database),
      loadGeneratorUs: per(before.load, after.load),
    };
  };
}
