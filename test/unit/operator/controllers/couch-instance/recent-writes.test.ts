import { RecentWrites } from '../../../../../operator/controllers/couch-instance/recent-writes.js';

describe('RecentWrites', () => {
  const object = (resourceVersion: string | undefined) => ({ metadata: { name: 'x', resourceVersion } });

  it('when the cache still shows the version a write replaced, then the write is read', () => {
    const recent = new RecentWrites();
    recent.remember('ns/x', 'slot', object('1'), object('2'));
    expect(recent.read('ns/x', 'slot', object('1'))?.metadata?.resourceVersion).toBe('2');
  });

  it('when two writes happen before the cache moves, then the latest write is read', () => {
    const recent = new RecentWrites();
    recent.remember('ns/x', 'slot', object('1'), object('2'));
    recent.remember('ns/x', 'slot', object('2'), object('3'));
    expect(recent.read('ns/x', 'slot', object('1'))?.metadata?.resourceVersion).toBe('3');
  });

  it('when the cache moves on, then the cache is read and the write forgotten', () => {
    const recent = new RecentWrites();
    recent.remember('ns/x', 'slot', object('1'), object('2'));
    expect(recent.read('ns/x', 'slot', object('5'))?.metadata?.resourceVersion).toBe('5');
    expect(recent.read('ns/x', 'slot', object('1'))?.metadata?.resourceVersion).toBe('1');
  });

  it('when an object was created and the cache has not seen it yet, then the created object is read', () => {
    const recent = new RecentWrites();
    recent.remember('ns/x', 'slot', undefined, object('7'));
    expect(recent.read('ns/x', 'slot', undefined)?.metadata?.resourceVersion).toBe('7');
  });
});
