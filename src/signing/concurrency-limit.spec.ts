import { ConcurrencyLimit } from './concurrency-limit';

describe('ConcurrencyLimit', () => {
  const tick = () => new Promise((r) => setImmediate(r));

  it('never runs more than the limit at once, and runs every task in arrival order', async () => {
    const limit = new ConcurrencyLimit(2);
    let running = 0;
    let peak = 0;
    const started: number[] = [];
    const task = (i: number) => async () => {
      started.push(i);
      peak = Math.max(peak, ++running);
      await tick();
      running--;
      return i;
    };
    const results = await Promise.all([0, 1, 2, 3, 4, 5, 6].map((i) => limit.run(task(i))));
    expect(results).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(peak).toBe(2);
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(limit.queued).toBe(0);
  });

  it('frees the slot of a failed task', async () => {
    const limit = new ConcurrencyLimit(1);
    await expect(limit.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(limit.run(async () => 'next')).resolves.toBe('next');
  });

  it('does not let a newcomer overtake tasks already waiting', async () => {
    const limit = new ConcurrencyLimit(1);
    const order: string[] = [];
    let release!: () => void;
    const first = limit.run(() => new Promise<void>((r) => (release = r)).then(() => void order.push('first')));
    const second = limit.run(async () => void order.push('second'));
    await tick();
    release();
    // Arrives while `second` is being handed the slot.
    const third = limit.run(async () => void order.push('third'));
    await Promise.all([first, second, third]);
    expect(order).toEqual(['first', 'second', 'third']);
  });

  it('refuses a limit below one', () => {
    expect(() => new ConcurrencyLimit(0)).toThrow(RangeError);
  });
});
