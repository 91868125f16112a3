/**
 * Runs `work(i)` for i in 0..count-1 with at most `inFlight` running at once, results in order. Tests that race many
 * requests use it instead of a bare Promise.all of thousands: on a loaded 2-core machine a thousand sockets opened in
 * the same instant overflow the listen queue and the kernel resets some of them, which is the machine failing the test,
 * not the server (docs/testing.md, On a busy machine). A hundred in flight still race each other for the same row.
 */
export async function concurrently<T>(count: number, work: (i: number) => Promise<T>, inFlight = 100): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      results[i] = await work(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, worker));
  return results;
}
