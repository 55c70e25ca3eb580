import { jest } from '@jest/globals';
import { ItemExponentialRateLimiter } from '../../../../kube/controller-runtime/rate-limiter.js';
import { WorkQueue } from '../../../../kube/controller-runtime/work-queue.js';

function newQueue(backoff = { baseMs: 20, maxMs: 1_000 }): WorkQueue {
  return new WorkQueue(new ItemExponentialRateLimiter(backoff));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** True when no key becomes ready within `ms` (checked without a waiting get(), which would take it). */
async function staysEmpty(queue: WorkQueue, ms: number): Promise<boolean> {
  await sleep(ms);
  return queue.length === 0;
}

describe('WorkQueue', () => {
  it('when one key is added several times before a worker takes it, then it is handed out once', async () => {
    const queue = newQueue();
    queue.add('ns/a');
    queue.add('ns/b');
    queue.add('ns/a');
    queue.add('ns/a');
    expect(queue.length).toBe(2);
    expect(await queue.get()).toBe('ns/a');
    expect(await queue.get()).toBe('ns/b');
    queue.done('ns/a');
    queue.done('ns/b');
    expect(await staysEmpty(queue, 30)).toBe(true);
    await queue.shutDown();
  });

  it('when a key is added while it is being processed, then no other worker gets it until done, and then it comes back once', async () => {
    const queue = newQueue();
    queue.add('ns/a');
    const first = await queue.get();
    expect(first).toBe('ns/a');
    queue.add('ns/a');
    queue.add('ns/a');
    // A second worker waiting meanwhile must not receive the key being processed.
    const secondWorker = queue.get();
    expect(await Promise.race([secondWorker, sleep(30).then(() => 'nothing')])).toBe('nothing');
    queue.done('ns/a');
    expect(await secondWorker).toBe('ns/a');
    queue.done('ns/a');
    expect(await staysEmpty(queue, 30)).toBe(true);
    await queue.shutDown();
  });

  it('when many workers race over keys added concurrently, then one key is never processed by two at once', async () => {
    const queue = newQueue();
    const inFlight = new Set<string>();
    let overlaps = 0;
    let processed = 0;
    const worker = async () => {
      for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
        if (inFlight.has(key)) overlaps += 1;
        inFlight.add(key);
        await sleep(Math.random() * 3);
        inFlight.delete(key);
        processed += 1;
        queue.done(key);
      }
    };
    const workers = Array.from({ length: 8 }, worker);
    for (let round = 0; round < 50; round += 1) {
      for (const key of ['ns/a', 'ns/b', 'ns/c']) queue.add(key);
      await sleep(1);
    }
    await sleep(30);
    await queue.shutDown();
    await Promise.all(workers);
    expect(overlaps).toBe(0);
    expect(processed).toBeGreaterThanOrEqual(3);
    // Dedup: far fewer reconciles than the 150 adds.
    expect(processed).toBeLessThan(150);
  });

  // The delays below run on jest's fake clock (setTimeout and Date.now), so each is exact to the
  // millisecond however loaded the machine is: a real clock only says "not early, not much late".
  describe('on a fake clock', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    /** Milliseconds of fake time until a key is ready, stepping 1 ms at a time. */
    async function msUntilReady(queue: WorkQueue, limitMs = 10_000): Promise<number> {
      for (let ms = 0; ms <= limitMs; ms += 1) {
        if (queue.length > 0) return ms;
        await jest.advanceTimersByTimeAsync(1);
      }
      throw new Error(`no key ready within ${limitMs} ms`);
    }

    it('when a key fails repeatedly, then its retry delay doubles from the base and stops at the cap', async () => {
      const queue = newQueue({ baseMs: 40, maxMs: 100 });
      const delays: number[] = [];
      for (let attempt = 0; attempt < 4; attempt += 1) {
        queue.addRateLimited('ns/a');
        delays.push(await msUntilReady(queue));
        expect(await queue.get()).toBe('ns/a');
        queue.done('ns/a');
      }
      expect(queue.failures('ns/a')).toBe(4);
      expect(delays).toEqual([40, 80, 100, 100]);
      await queue.shutDown();
    });

    it('when a failing key is forgotten, then its next retry waits only the base delay again', async () => {
      const queue = newQueue({ baseMs: 20, maxMs: 10_000 });
      const delays: number[] = [];
      for (let attempt = 0; attempt < 2; attempt += 1) {
        queue.addRateLimited('ns/a');
        delays.push(await msUntilReady(queue));
        expect(await queue.get()).toBe('ns/a');
        queue.done('ns/a');
      }
      expect(queue.failures('ns/a')).toBe(2);
      queue.forget('ns/a');
      expect(queue.failures('ns/a')).toBe(0);
      queue.addRateLimited('ns/a');
      delays.push(await msUntilReady(queue));
      expect(delays).toEqual([20, 40, 20]);
      await queue.shutDown();
    });

    it('when a key is added after a delay, then it is handed out after that delay, and the earliest of several delays wins', async () => {
      const queue = newQueue();
      queue.addAfter('ns/a', 300);
      queue.addAfter('ns/a', 60);
      queue.addAfter('ns/a', 200);
      expect(await msUntilReady(queue)).toBe(60);
      expect(await queue.get()).toBe('ns/a');
      queue.done('ns/a');
      // The later delayed adds were merged into the earliest: nothing else arrives.
      await jest.advanceTimersByTimeAsync(1_000);
      expect(queue.length).toBe(0);
      await queue.shutDown();
    });
  });

  it('when a key is added after more than setTimeout can wait (idleAfter of 30 days), then it is not handed out at once', async () => {
    const queue = newQueue();
    queue.addAfter('ns/a', 30 * 24 * 3_600_000);
    // Node would run an over-long timer after 1 ms: the reconcile would spin.
    expect(await staysEmpty(queue, 50)).toBe(true);
    await queue.shutDown();
  });

  it('when a delayed key is also added at once, then it is handed out at once and only once', async () => {
    const queue = newQueue();
    queue.addAfter('ns/a', 50);
    queue.add('ns/a');
    expect(await queue.get()).toBe('ns/a');
    queue.done('ns/a');
    // The delayed add still fires later: a requeue-after is a promise to look again.
    expect(await staysEmpty(queue, 10)).toBe(true);
    expect(await queue.get()).toBe('ns/a');
    queue.done('ns/a');
    await queue.shutDown();
  });

  it('when the queue shuts down, then waiting workers get undefined, it waits for keys in flight, and later adds are ignored', async () => {
    const queue = newQueue();
    queue.add('ns/a');
    queue.add('ns/b');
    expect(await queue.get()).toBe('ns/a');
    let drained = false;
    const shutdown = queue.shutDown().then(() => (drained = true));
    expect(await queue.get()).toBeUndefined();
    await sleep(20);
    expect(drained).toBe(false);
    queue.done('ns/a');
    await shutdown;
    expect(drained).toBe(true);
    queue.add('ns/c');
    queue.addAfter('ns/d', 1);
    expect(queue.length).toBe(0);
    expect(await queue.get()).toBeUndefined();
  });

  it('when the queue shuts down with delayed keys pending, then their timers are cancelled', async () => {
    const queue = newQueue();
    queue.addAfter('ns/a', 30);
    await queue.shutDown();
    await sleep(60);
    expect(queue.length).toBe(0);
  });
});
