import { RecentWrites } from '../../../../kube/controller-runtime/recent-writes.js';

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

  it('when a write is remembered, then of its managedFields only the writers are kept', () => {
    const recent = new RecentWrites();
    const written = {
      metadata: {
        name: 'x',
        resourceVersion: '2',
        managedFields: [{ manager: 'settee', operation: 'Apply', fieldsV1: { 'f:spec': {} } }],
      },
    };
    recent.remember('ns/x', 'slot', object('1'), written);
    const read = recent.read<typeof written>('ns/x', 'slot', object('1') as typeof written);
    expect(read?.metadata?.resourceVersion).toBe('2');
    expect(read?.metadata?.managedFields).toEqual([{ manager: 'settee', operation: 'Apply' }]);
  });

  it('when an object was created and the cache has not seen it yet, then the created object is read', () => {
    const recent = new RecentWrites();
    recent.remember('ns/x', 'slot', undefined, object('7'));
    expect(recent.read('ns/x', 'slot', undefined)?.metadata?.resourceVersion).toBe('7');
  });

  it('when the cache shows the version the last write returned, then it is the own last write, also after catching up', () => {
    const recent = new RecentWrites();
    recent.remember('ns/x', 'slot', object('1'), object('2'));
    expect(recent.isOwnLastWrite('ns/x', 'slot', recent.read('ns/x', 'slot', object('1')))).toBe(true);
    expect(recent.isOwnLastWrite('ns/x', 'slot', recent.read('ns/x', 'slot', object('2')))).toBe(true);
    expect(recent.isOwnLastWrite('ns/x', 'slot', object('2'))).toBe(true);
  });

  it('when someone else changed the object after the last write, then it is not the own last write', () => {
    const recent = new RecentWrites();
    recent.remember('ns/x', 'slot', object('1'), object('2'));
    expect(recent.isOwnLastWrite('ns/x', 'slot', recent.read('ns/x', 'slot', object('9')))).toBe(false);
    expect(recent.isOwnLastWrite('ns/x', 'slot', object('2'))).toBe(true);
  });

  it('when another controller wrote only the status since the last write, then it is still the own last write', () => {
    const recent = new RecentWrites();
    const version = (
      resourceVersion: string,
      generation: number,
      labels = { app: 'couchdb' },
      uid = 'u1',
    ) => ({
      metadata: { name: 'x', uid, resourceVersion, generation, labels },
      status: { replicas: Number(resourceVersion) },
    });
    recent.remember('ns/x', 'slot', version('1', 1), version('2', 2));
    expect(recent.isOwnLastWrite('ns/x', 'slot', version('3', 2))).toBe(true);
    // A spec edit (kubectl scale) moves the generation; a label edit does not, but changes metadata.
    expect(recent.isOwnLastWrite('ns/x', 'slot', version('4', 3))).toBe(false);
    expect(recent.isOwnLastWrite('ns/x', 'slot', version('5', 2, { app: 'other' }))).toBe(false);
    // Deleted and made again by someone else (a new uid), it may reach the written generation anew.
    expect(recent.isOwnLastWrite('ns/x', 'slot', version('6', 2, { app: 'couchdb' }, 'u2'))).toBe(false);
    // Kinds without a generation (ConfigMaps, Services) still go by the version alone.
    recent.remember('ns/x', 'plain', object('1'), object('2'));
    expect(recent.isOwnLastWrite('ns/x', 'plain', object('3'))).toBe(false);
  });

  it('when nothing was written, or the owner was forgotten, then no version is the own last write', () => {
    const recent = new RecentWrites();
    expect(recent.isOwnLastWrite('ns/x', 'slot', object('2'))).toBe(false);
    recent.remember('ns/x', 'slot', object('1'), object('2'));
    expect(recent.isOwnLastWrite('ns/x', 'other', object('2'))).toBe(false);
    expect(recent.isOwnLastWrite('ns/x', 'slot', undefined)).toBe(false);
    recent.forget('ns/x');
    expect(recent.isOwnLastWrite('ns/x', 'slot', object('2'))).toBe(false);
  });

  it('when an event shows exactly the version the last write produced, then it is the written version; a later one, even a status-only one of another controller, is not', () => {
    const recent = new RecentWrites();
    const version = (resourceVersion: string, generation: number) => ({
      metadata: { name: 'x', resourceVersion, generation },
    });
    expect(recent.observeEvent('ns/x', 'slot', version('2', 1))).toBe(false);
    recent.remember('ns/x', 'slot', version('1', 1), version('2', 1));
    expect(recent.observeEvent('ns/x', 'slot', version('2', 1))).toBe(true);
    // The StatefulSet controller's status write keeps the generation: isOwnLastWrite, but news.
    expect(recent.isOwnLastWrite('ns/x', 'slot', version('3', 1))).toBe(true);
    expect(recent.observeEvent('ns/x', 'slot', version('3', 1))).toBe(false);
    expect(recent.observeEvent('ns/x', 'other', version('2', 1))).toBe(false);
    expect(recent.observeEvent('ns/x', 'slot', { metadata: { name: 'x' } })).toBe(false);
    recent.forget('ns/x');
    expect(recent.observeEvent('ns/x', 'slot', version('2', 1))).toBe(false);
  });

  it('when the watch event of the last write arrives, then its copy is dropped: a reconcile reads the cache from then on', () => {
    const recent = new RecentWrites();
    recent.remember('ns/x', 'slot', object('1'), object('2'));
    expect(recent.observeEvent('ns/x', 'slot', object('2'))).toBe(true);
    // The copy would win over a cache still at the replaced version; dropped, the cache is read.
    expect(recent.read('ns/x', 'slot', object('1'))?.metadata?.resourceVersion).toBe('1');
    expect(recent.isOwnLastWrite('ns/x', 'slot', object('2'))).toBe(true);
  });

  it("when an event shows another version than the last write, then the write's copy is kept", () => {
    const recent = new RecentWrites();
    recent.remember('ns/x', 'slot', object('1'), object('2'));
    expect(recent.observeEvent('ns/x', 'slot', object('1'))).toBe(false);
    expect(recent.read('ns/x', 'slot', object('1'))?.metadata?.resourceVersion).toBe('2');
  });

  describe('when a watch event arrives while a write of its slot is in flight', () => {
    const answered = () => {
      let answer!: (written: ReturnType<typeof object>) => void;
      let fail!: (err: Error) => void;
      const sent = new Promise<ReturnType<typeof object>>((resolve, reject) => {
        answer = resolve;
        fail = reject;
      });
      return { send: () => sent, answer, fail };
    };

    it('then it is held, and is the own write once the answer shows its version; its copy is dropped', async () => {
      const recent = new RecentWrites();
      const write = answered();
      const writing = recent.write('ns/x', 'slot', object('1'), write.send);
      const held = recent.observeEvent('ns/x', 'slot', object('2'));
      expect(held).toBeInstanceOf(Promise);
      // Another slot of the owner is not held.
      expect(recent.observeEvent('ns/x', 'other', object('2'))).toBe(false);
      write.answer(object('2'));
      await expect(writing).resolves.toEqual(object('2'));
      await expect(held).resolves.toBe(true);
      expect(recent.read('ns/x', 'slot', object('1'))?.metadata?.resourceVersion).toBe('1');
      expect(recent.isOwnLastWrite('ns/x', 'slot', object('2'))).toBe(true);
    });

    it("then a version the answer does not show is someone else's, and the write's copy is kept", async () => {
      const recent = new RecentWrites();
      const write = answered();
      const writing = recent.write('ns/x', 'slot', object('1'), write.send);
      const held = recent.observeEvent('ns/x', 'slot', object('3'));
      write.answer(object('4'));
      await writing;
      await expect(held).resolves.toBe(false);
      expect(recent.read('ns/x', 'slot', object('1'))?.metadata?.resourceVersion).toBe('4');
    });

    it('then, if the write fails, the event is decided by the last write that succeeded', async () => {
      const recent = new RecentWrites();
      recent.remember('ns/x', 'slot', object('1'), object('2'));
      const write = answered();
      const writing = recent.write('ns/x', 'slot', object('2'), write.send);
      const lateOwn = recent.observeEvent('ns/x', 'slot', object('2'));
      const foreign = recent.observeEvent('ns/x', 'slot', object('3'));
      write.fail(new Error('refused'));
      await expect(writing).rejects.toThrow('refused');
      await expect(lateOwn).resolves.toBe(true);
      await expect(foreign).resolves.toBe(false);
      // Nothing is held any more.
      expect(recent.observeEvent('ns/x', 'slot', object('3'))).toBe(false);
    });
  });
});
