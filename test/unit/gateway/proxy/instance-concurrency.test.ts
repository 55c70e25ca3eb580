import { InstanceConcurrency } from '../../../../gateway/proxy/instance-concurrency.js';

describe('InstanceConcurrency', () => {
  it('when an instance has `limit` requests in flight, then the next is refused until one leaves, and other instances are not counted with it', () => {
    const limits = new InstanceConcurrency(2);
    expect([limits.tryEnter('a'), limits.tryEnter('a'), limits.tryEnter('a')]).toEqual([true, true, false]);
    expect(limits.tryEnter('b')).toBe(true);
    limits.leave('a');
    expect([limits.tryEnter('a'), limits.tryEnter('a')]).toEqual([true, false]);
  });

  it('when the limit is 0, then nothing is refused', () => {
    const limits = new InstanceConcurrency(0);
    expect(Array.from({ length: 1_000 }, () => limits.tryEnter('a')).every(Boolean)).toBe(true);
  });
});
