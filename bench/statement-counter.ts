/**
 * Loaded with `node --require` into the server under test: counts the PostgreSQL statements its `pg` clients send
 * (one `Client#query` is one round trip; BEGIN and COMMIT count too), so the bench can report statements per request
 * (docs/performance.md, Method). Every process of the tree (the primary and its node:cluster workers, which inherit
 * the flag) writes its running count to `$BENCH_STATEMENT_DIR/<pid>` every 50 ms; the bench sums the files.
 */
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';

const dir = process.env.BENCH_STATEMENT_DIR;
if (dir) {
  let count = 0;
  // The same module instance the server loads (one `pg` in node_modules), patched before the server requires it.
  const proto = Client.prototype as unknown as { query: (this: Client, ...args: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function (this: Client, ...args: unknown[]) {
    count++;
    return query.apply(this, args);
  };
  const file = join(dir, String(process.pid));
  // Written aside and renamed, so a reader never sees a half-written file.
  const flush = () => {
    writeFileSync(`${file}.tmp`, String(count));
    renameSync(`${file}.tmp`, file);
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
      const n = Number(readFileSync(join(directory, name), 'utf8'));
      if (Number.isFinite(n)) counts.set(Number(name), n);
    }
    return counts;
  };
}
