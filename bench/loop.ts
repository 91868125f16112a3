/**
 * The server's event loop over one measured run, read from its own /metrics (prom-client's default metrics,
 * docs/performance.md "The validate tail at saturation"): a scrape before the run resets the loop-delay histogram
 * (prom-client resets it at each scrape), a scrape after it reads the delay's p99 and max over the run, and the two
 * scrapes' garbage-collection counters give the GC pauses in between. Single-process servers only: with
 * WEB_CONCURRENCY > 1 a scrape answers for the workers together.
 */
export interface LoopReading {
  /** The event loop's delay over the run, ms: p99 and max. The timer's resolution is 10 ms, so an idle loop reads about 10. */
  lagP99Ms: number;
  lagMaxMs: number;
  /** Garbage-collection pauses during the run: their total, ms, how many, and how many took 10 ms or more. */
  gcMs: number;
  gcPauses: number;
  gcPausesOver10Ms: number;
}

export interface LoopMeter {
  /** Before a run: resets the loop-delay histogram and notes the GC counters. */
  start(): Promise<void>;
  /** After the run: what the loop did since start(); undefined when the server answered no metrics. */
  read(): Promise<LoopReading | undefined>;
}

/** The samples of a Prometheus text exposition: name and labels as written (`name{a="b"}`) to their value. */
export function parseSamples(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    const value = Number(line.slice(space + 1));
    if (space > 0 && Number.isFinite(value)) samples.set(line.slice(0, space), value);
  }
  return samples;
}

/** The sum of every sample of `name` whose labels include `label` (all of them when `label` is empty). */
function total(samples: Map<string, number>, name: string, label = ''): number {
  let sum = 0;
  for (const [key, value] of samples) {
    const brace = key.indexOf('{');
    const keyName = brace < 0 ? key : key.slice(0, brace);
    if (keyName === name && key.includes(label)) sum += value;
  }
  return sum;
}

interface GcCounters {
  seconds: number;
  count: number;
  under10Ms: number;
}

const gcCounters = (s: Map<string, number>): GcCounters => ({
  seconds: total(s, 'nodejs_gc_duration_seconds_sum'),
  count: total(s, 'nodejs_gc_duration_seconds_count'),
  under10Ms: total(s, 'nodejs_gc_duration_seconds_bucket', 'le="0.01"'),
});

const ms = (seconds: number) => Math.round(seconds * 10_000) / 10;

/** A LoopMeter for the server at `url`, scraping /metrics with the admin API key. */
export function loopMeter(url: string, apiKey: string): LoopMeter {
  const scrape = async (): Promise<Map<string, number> | undefined> => {
    const res = await fetch(`${url}/metrics`, { headers: { 'x-api-key': apiKey } }).catch(() => undefined);
    return res?.ok ? parseSamples(await res.text()) : undefined;
  };
  let before: GcCounters | undefined;
  return {
    async start() {
      const samples = await scrape();
      before = samples && gcCounters(samples);
    },
    async read() {
      const samples = await scrape();
      if (!samples || !before || !samples.has('nodejs_eventloop_lag_max_seconds')) return undefined;
      const after = gcCounters(samples);
      const pauses = after.count - before.count;
      return {
        lagP99Ms: ms(samples.get('nodejs_eventloop_lag_p99_seconds') ?? 0),
        lagMaxMs: ms(samples.get('nodejs_eventloop_lag_max_seconds') ?? 0),
        gcMs: ms(after.seconds - before.seconds),
        gcPauses: pauses,
        gcPausesOver10Ms: pauses - (after.under10Ms - before.under10Ms),
      };
    },
  };
}
