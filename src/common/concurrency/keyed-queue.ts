/**
 * Runs tasks with the same key one after another in this process; different keys run concurrently.
 * Waiting happens here, in memory, instead of in a database connection blocked on a row lock, so a
 * burst on one hot row cannot take the whole connection pool from every other request. (The row
 * lock still serialises instances against each other.)
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
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
