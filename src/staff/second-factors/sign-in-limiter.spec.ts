import { SerialQueues } from './sign-in-limiter';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('SerialQueues (docs/dashboard.md, Failed sign-ins)', () => {
  it('runs ten parallel tasks of one key one at a time, in arrival order', async () => {
    const queues = new SerialQueues();
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const releases: (() => void)[] = [];
    const task = (n: number) => async () => {
      running += 1;
      most = Math.max(most, running);
      order.push(n);
      await new Promise<void>((resolve) => releases.push(resolve));
      running -= 1;
    };
    const all = Promise.all(Array.from({ length: 10 }, (_, n) => queues.run('alice', task(n))));
    for (let i = 0; i < 10; i++) {
      await tick();
      // Only one has started; the others wait their turn.
      expect(releases).toHaveLength(i + 1);
      releases[i]();
    }
    await all;
    expect(most).toBe(1);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(queues.size).toBe(0);
  });

  it('keys do not wait for each other, and a failed task does not stall the queue', async () => {
    const queues = new SerialQueues();
    let release!: () => void;
    const slow = queues.run('alice', () => new Promise<void>((resolve) => (release = resolve)));
    let bobDone = false;
    await queues.run('bob', async () => {
      bobDone = true;
    });
    expect(bobDone).toBe(true);
    const failing = queues.run('alice', () => Promise.reject(new Error('boom')));
    let after = false;
    const next = queues.run('alice', async () => {
      after = true;
    });
    release();
    await slow;
    await expect(failing).rejects.toThrow('boom');
    await next;
    expect(after).toBe(true);
    expect(queues.size).toBe(0);
  });
});
