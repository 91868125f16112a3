/**
 * Loaded with `node --require` into the server under test: counts the PostgreSQL statements its `pg` clients send
 * (one `Client#query` is one round trip; BEGIN and COMMIT count too), so the bench can report statements per request
 * (docs/performance.md, Method). Every process of the tree (the primary and its node:cluster workers, which inherit
 * the flag) writes its running count to `$BENCH_STATEMENT_DIR/<pid>` every 50 ms; the bench sums the files.
 */
import { openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';

const dir = process.env.BENCH_STATEMENT_DIR;
/** Digits of a count in its file (padded with spaces): wide enough for any run. */
const COUNT_WIDTH = 16;
if (dir) {
  let count = 0;
  // The same module instance the server loads (one `pg` in node_modules), patched before the server requires it.
  const proto = Client.prototype as unknown as { query: (this: Client, ...args: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function (this: Client, ...args: unknown[]) {
    count++;
    return query.apply(this, args);
  };
  // One file per process, kept open, the count rewritten in place at a fixed width (one small pwrite, which a reader
  // sees whole) and only when it changed: the file created, written and renamed every 50 ms cost the server measurable
  // CPU on a loaded machine (docs/performance.md, Performance round 3), which every row then counted as the server's.
  const fd = openSync(join(dir, String(process.pid)), 'w');
  let written = -1;
  const flush = () => {
    if (count === written) return;
    writeSync(fd, String(count).padStart(COUNT_WIDTH), 0);
    written = count;
  };
  flush();
  setInterval(flush, 50).unref();
  process.once('exit', flush);
}

/** A meter of one server's statements: pid → statements sent so far, from the files its processes wrote. */
export function statementMeter(directory: string): () => Map<number, number> {
  return () => {
    const counts = new Map<number, number>();
    for (const name of readdirSync(directory).filter((f) => /^\d+$/.test(f))) {
      const text = readFileSync(join(directory, name), 'utf8').trim();
      const n = Number(text);
      if (text && Number.isFinite(n)) counts.set(Number(name), n);
    }
    return counts;
  };
}
