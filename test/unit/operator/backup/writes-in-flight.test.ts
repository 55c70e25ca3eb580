import { WritesInFlight } from '../../../../operator/backup/writes-in-flight.js';

/** A write the test answers by hand. */
function write() {
  let answer!: () => void;
  let refuse!: (err: Error) => void;
  const promise = new Promise<void>((resolve, reject) => {
    answer = resolve;
    refuse = reject;
  });
  return { promise, answer, refuse };
}

/** Whether `promise` settled by the time already-queued callbacks ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('WritesInFlight', () => {
  it('when fewer writes than the limit are unanswered, then adding one returns at once', async () => {
    const writes = new WritesInFlight(3);
    await writes.add(write().promise);
    await writes.add(write().promise);
    expect(await settled(writes.drain())).toBe(false);
  });

  it('when the limit is reached, then add waits until one write is answered', async () => {
    const writes = new WritesInFlight(2);
    const first = write();
    await writes.add(first.promise);
    const adding = writes.add(write().promise);
    expect(await settled(adding)).toBe(false);
    first.answer();
    expect(await settled(adding)).toBe(true);
    await adding;
  });

  it('when a limit of 1 is given, then each write is answered before add returns', async () => {
    const writes = new WritesInFlight(1);
    const only = write();
    const adding = writes.add(only.promise);
    expect(await settled(adding)).toBe(false);
    only.answer();
    await adding;
    await writes.drain();
  });

  it('when a write fails, then the next add and drain reject with its error, and the others settle unobserved', async () => {
    const writes = new WritesInFlight(3);
    const failing = write();
    const other = write();
    await writes.add(failing.promise);
    await writes.add(other.promise);
    failing.refuse(new Error('conflict'));
    await expect(writes.add(write().promise)).rejects.toThrow('conflict');
    other.refuse(new Error('later'));
    await expect(writes.drain()).rejects.toThrow('conflict');
  });

  it('when a write fails while add waits at the limit, then add rejects instead of waiting on', async () => {
    const writes = new WritesInFlight(1);
    const failing = write();
    const adding = writes.add(failing.promise);
    failing.refuse(new Error('refused'));
    await expect(adding).rejects.toThrow('refused');
  });

  it('when a write fails while others are in flight, then settle resolves only once each of them is answered', async () => {
    const writes = new WritesInFlight(3);
    const failing = write();
    const slow = write();
    const slower = write();
    await writes.add(failing.promise);
    await writes.add(slow.promise);
    failing.refuse(new Error('conflict'));
    await expect(writes.add(slower.promise)).rejects.toThrow('conflict');
    const settling = writes.settle();
    expect(await settled(settling)).toBe(false);
    slow.answer();
    expect(await settled(settling)).toBe(false);
    slower.refuse(new Error('later'));
    await expect(settling).resolves.toBeUndefined();
  });

  it('when a write has failed, then throwIfFailed throws its error before any further add', async () => {
    const writes = new WritesInFlight(3);
    const failing = write();
    await writes.add(failing.promise);
    expect(() => writes.throwIfFailed()).not.toThrow();
    failing.refuse(new Error('refused'));
    await settled(failing.promise);
    expect(() => writes.throwIfFailed()).toThrow('refused');
  });

  it('when the limit is not a whole number of 1 or more, then it is refused', () => {
    expect(() => new WritesInFlight(0)).toThrow(RangeError);
    expect(() => new WritesInFlight(1.5)).toThrow(RangeError);
  });
});
