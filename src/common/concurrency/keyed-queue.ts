/**
 * Runs tasks with the same key one after another in this process; different keys run concurrently.
 * Waiting happens here, in memory, instead of in a database connection blocked on a row lock, so a
 * burst on one hot row cannot take the whole connection pool from every other request. (The row
 * lock still serialises instances against each other.) A task that cannot start within `maxWaitMs`
 * is rejected with `waitedTooLong()` and never runs, so waiting here is bounded too.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();

  constructor(
    private readonly maxWaitMs: number,
    private readonly waitedTooLong: () => Error,
  ) {}

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let gaveUp = false;
    const turn = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        gaveUp = true;
        reject(this.waitedTooLong());
      }, this.maxWaitMs);
      void previous.then(() => {
        clearTimeout(timer);
        if (!gaveUp) resolve();
      });
    });
    const result = turn.then(task);
    // The next task's turn comes when this one has finished, or (if it gave up) when its predecessor has.
    const tail = previous.then(() => result.then(noop, noop));
    this.tails.set(key, tail);
    // The last task of a key removes it: the map holds only keys with work in flight.
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Keys with work queued or running. */
  get size(): number {
    return this.tails.size;
  }
}

const noop = () => undefined;
