import { Client } from 'pg';

/**
 * A pg Client whose queries have a deadline. A database that stops answering without closing the
 * connection (a frozen server, a network partition) otherwise holds a request forever: TCP keeps the
 * socket open, and statement_timeout is enforced by the very server that is not answering. At the
 * deadline the connection is destroyed, so the query fails as a connection error (503), the pool
 * discards the client, and the server rolls back whatever transaction that connection had open.
 * (pg's own query_timeout leaves the connection in use, so a later request could inherit its open transaction.)
 */
/**
 * The socket under a pg Client. pg has no public way to cut a connection while a query runs (`end()` waits for it),
 * so this reads its private `connection.stream`: the one reach into pg's internals, guarded by
 * src/database/deadline-client.spec.ts, which fails when a pg upgrade moves it.
 */
export function clientSocket(client: Client): { destroy(): void } | undefined {
  const stream = (client as unknown as { connection?: { stream?: unknown } }).connection?.stream;
  return stream && typeof (stream as { destroy?: unknown }).destroy === 'function' ? (stream as { destroy(): void }) : undefined;
}

export function clientWithDeadline(deadlineMs: number): typeof Client {
  class DeadlineClient extends Client {}
  // Assigned rather than overridden: one variadic wrapper cannot restate pg's overloads of query().
  function query(this: Client, ...args: unknown[]): unknown {
    const timeout = () => {
      clientSocket(this)?.destroy();
      return Object.assign(new Error(`The database did not answer within ${deadlineMs} ms`), { code: 'ETIMEDOUT' });
    };
    const run = (a: unknown[]): unknown => (Client.prototype.query as (...x: unknown[]) => unknown).apply(this, a);
    const last = args[args.length - 1];
    if (typeof last === 'function') {
      // Callback form (pg-pool's Pool.query): answer once, whichever comes first.
      const callback = last as (err: unknown, res?: unknown) => void;
      let answered = false;
      const answer = (err: unknown, res?: unknown) => {
        if (answered) return;
        answered = true;
        callback(err, res);
      };
      const timer = setTimeout(() => answer(timeout()), deadlineMs);
      return run([
        ...args.slice(0, -1),
        (err: unknown, res: unknown) => {
          clearTimeout(timer);
          answer(err, res);
        },
      ]);
    }
    const pending = run(args);
    if (!(pending instanceof Promise)) return pending; // a Submittable (cursor, stream): not used here
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(timeout()), deadlineMs)));
    // The destroyed connection also fails the query itself; that rejection is expected and ignored.
    pending.catch(() => undefined);
    return Promise.race([pending, deadline]).finally(() => clearTimeout(timer));
  }
  DeadlineClient.prototype.query = query as unknown as Client['query'];
  return DeadlineClient;
}
