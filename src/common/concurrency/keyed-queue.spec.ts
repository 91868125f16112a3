import { KeyedQueue } from './keyed-queue';

const tick = () => new Promise((r) => setImmediate(r));
const busy = () => new Error('busy');

describe('KeyedQueue', () => {
  it('runs tasks of one key one after another, in arrival order', async () => {
    const queue = new KeyedQueue(10_000, busy);
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
    const queue = new KeyedQueue(10_000, busy);
    let release!: () => void;
    const blocked = queue.run('a', () => new Promise<void>((r) => (release = r)));
    await expect(queue.run('b', async () => 'b done')).resolves.toBe('b done');
    release();
    await blocked;
  });

  it('a failing task rejects its own caller only; the next task of the key still runs', async () => {
    const queue = new KeyedQueue(10_000, busy);
    const failed = queue.run('k', async () => {
      throw new Error('boom');
    });
    const next = queue.run('k', async () => 'next');
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBe('next');
  });

  it('gives up on a task that cannot start in time: rejected at once, never run, and the line moves on', async () => {
    jest.useFakeTimers();
    try {
      const queue = new KeyedQueue(1000, busy);
      let release!: () => void;
      const first = queue.run('k', () => new Promise<string>((r) => (release = () => r('first'))));
      await jest.advanceTimersByTimeAsync(0); // the first task starts, and runs for longer than the wait allows
      const ran: string[] = [];
      const second = queue.run('k', async () => void ran.push('second'));
      const secondSettled = expect(second).rejects.toThrow('busy');
      await jest.advanceTimersByTimeAsync(1001);
      await secondSettled;
      const third = queue.run('k', async () => 'third');
      release();
      await expect(first).resolves.toBe('first');
      await expect(third).resolves.toBe('third');
      expect(ran).toEqual([]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('forgets a key once its last task has finished', async () => {
    const queue = new KeyedQueue(10_000, busy);
    await Promise.all([queue.run('a', async () => 1), queue.run('b', async () => 2)]);
    await tick();
    expect(queue.size).toBe(0);
  });
});
