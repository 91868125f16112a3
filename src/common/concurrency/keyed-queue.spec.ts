import { KeyedQueue } from './keyed-queue';

const tick = () => new Promise((r) => setImmediate(r));

describe('KeyedQueue', () => {
  it('runs tasks of one key one after another, in arrival order', async () => {
    const queue = new KeyedQueue();
    const log: string[] = [];
    const task = (name: string) => async () => {
      log.push(`start ${name}`);
      await tick();
      log.push(`end ${name}`);
      return name;
    };
    const results = await Promise.all([queue.run('k', task('a')), queue.run('k', task('b')), queue.run('k', task('c'))]);
    expect(results).toEqual(['a', 'b', 'c']);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  it('runs different keys concurrently', async () => {
    const queue = new KeyedQueue();
    let release!: () => void;
    const blocked = queue.run('a', () => new Promise<void>((r) => (release = r)));
    const other = await queue.run('b', async () => 'b done');
    expect(other).toBe('b done');
    release();
    await blocked;
  });

  it('a failing task rejects its own caller only; the next task of the key still runs', async () => {
    const queue = new KeyedQueue();
    const failed = queue.run('k', async () => {
      throw new Error('boom');
    });
    const next = queue.run('k', async () => 'next');
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBe('next');
  });

  it('forgets a key once its last task has finished', async () => {
    const queue = new KeyedQueue();
    await Promise.all([queue.run('a', async () => 1), queue.run('b', async () => 2)]);
    await tick();
    expect(queue.size).toBe(0);
  });
});
