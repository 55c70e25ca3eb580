import { jest } from '@jest/globals';
import type { CustomObjectsApi } from '@kubernetes/client-node';
import { KubeApiError } from '../../../kube/errors.js';
import { LeaderElector } from '../../../kube/leader-election.js';
import { createSilentLogger } from '../../../observability/logger.js';

/**
 * The narrowest timing the operator accepts (leaseDuration = renewDeadline + retryPeriod + 1 s):
 * a leader that cannot renew must have stopped before a standby may start, with nothing to spare
 * for a clock read on the wrong side of a slow API call. On jest's fake clock, so exact.
 */
const TIMING = { leaseDurationMs: 5_000, renewDeadlineMs: 3_500, retryPeriodMs: 500 };

interface StoredLease {
  metadata: { resourceVersion?: string };
  spec?: { renewTime?: string };
}

/** One Lease as the API server keeps it: writes carry the resourceVersion they were read at. */
class LeaseStore {
  private lease: StoredLease | undefined;
  private version = 0;

  read(): StoredLease {
    if (!this.lease) throw new KubeApiError({ statusCode: 404, reason: 'NotFound', message: 'no Lease' });
    return structuredClone(this.lease);
  }

  create(body: StoredLease): StoredLease {
    if (this.lease) throw new KubeApiError({ statusCode: 409, reason: 'AlreadyExists', message: 'exists' });
    return this.write(body);
  }

  replace(body: StoredLease): StoredLease {
    if (body.metadata.resourceVersion !== String(this.version))
      throw new KubeApiError({ statusCode: 409, reason: 'Conflict', message: 'stale resourceVersion' });
    return this.write(body);
  }

  private write(body: StoredLease): StoredLease {
    this.version += 1;
    this.lease = {
      ...structuredClone(body),
      metadata: { ...body.metadata, resourceVersion: String(this.version) },
    };
    return structuredClone(this.lease);
  }
}

/**
 * One replica's view of the API server, around each call: it may hold the request
 * before it reaches the store (`before`), hold the answer after the store applied it (`after`), or
 * throw (the replica cut off).
 */
interface Network {
  before?: (call: 'read' | 'write') => Promise<void> | void;
  after?: (call: 'read' | 'write') => Promise<void> | void;
}

function client(store: LeaseStore, network: Network): CustomObjectsApi {
  const call = async <T>(kind: 'read' | 'write', apply: () => T): Promise<T> => {
    await network.before?.(kind);
    const answer = apply();
    await network.after?.(kind);
    return answer;
  };
  return {
    getNamespacedCustomObject: () => call('read', () => store.read()),
    createNamespacedCustomObject: ({ body }: { body: StoredLease }) =>
      call('write', () => store.create(body)),
    replaceNamespacedCustomObject: ({ body }: { body: StoredLease }) =>
      call('write', () => store.replace(body)),
  } as unknown as CustomObjectsApi;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const cutOff = () => Promise.reject(new Error('connect ECONNREFUSED'));

describe('LeaderElector on a slow API server', () => {
  const electors: LeaderElector[] = [];
  let timeline: string[] = [];

  beforeEach(() => {
    jest.useFakeTimers({ now: Date.parse('2026-11-28T12:00:00.000Z') });
    timeline = [];
  });

  afterEach(async () => {
    const stopping = Promise.all(electors.splice(0).map((elector) => elector.stop()));
    await jest.advanceTimersByTimeAsync(10_000);
    await stopping;
    jest.useRealTimers();
  });

  function elector(identity: string, store: LeaseStore, network: Network): LeaderElector {
    const created = new LeaderElector({
      customObjects: client(store, network),
      namespace: 'settee-system',
      leaseName: 'settee-operator',
      identity,
      ...TIMING,
      logger: createSilentLogger(),
      onStartedLeading: () => timeline.push(`${identity} started`),
      onStoppedLeading: async () => {
        timeline.push(`${identity} stopped`);
      },
      onLostLeadership: () => timeline.push(`${identity} lost`),
    });
    electors.push(created);
    created.start();
    return created;
  }

  it("when the leader's renewal is committed at once but answered 2.5 s later, and then it is cut off, then it stops leading before the standby starts", async () => {
    const store = new LeaseStore();
    let writes = 0;
    let cut = false;
    const a = elector('a', store, {
      before: () => (cut ? cutOff() : undefined),
      // The acquisition is answered at once; the first renewal 2.5 s after the store applied it.
      after: async (call) => {
        if (call !== 'write' || ++writes !== 2) return;
        await sleep(2_500);
        cut = true;
      },
    });
    await jest.advanceTimersByTimeAsync(100);
    expect(a.isLeader).toBe(true);
    elector('b', store, {});
    await jest.advanceTimersByTimeAsync(20_000);
    // Counted from the answer, a would lead until 0.5 + 2.5 + 0.5 + 3.5 = 7 s, while b takes over a
    // lease duration after it saw the renewal written at 0.5 s: about 6 s.
    expect(timeline).toEqual(['a started', 'a stopped', 'a lost', 'b started']);
  });

  it('when a renewal is answered late, then the next round begins at once and has what is left of the deadline from the renewTime written', async () => {
    const store = new LeaseStore();
    let writes = 0;
    const a = elector('a', store, {
      // The first renewal (written at 0.5 s) answers at 3 s; the second, written when the next
      // round begins, 1.2 s after it is applied: within its deadline of 0.5 + 0.5 + 3.5 = 4.5 s
      // only if that round began at once (3 s), not a retry period after the late answer (3.5 s).
      after: async (call) => {
        if (call !== 'write') return;
        writes += 1;
        if (writes === 2) await sleep(2_500);
        if (writes === 3) await sleep(1_200);
      },
    });
    await jest.advanceTimersByTimeAsync(20_000);
    expect(writes).toBeGreaterThan(10);
    expect(timeline).toEqual(['a started']);
    expect(a.isLeader).toBe(true);
  });

  it('when the read that shows the standby a renewal is answered 3 s after it was sent, and then the leader is cut off, then the standby starts only after the leader stopped', async () => {
    const store = new LeaseStore();
    let cut = false;
    const a = elector('a', store, { before: () => (cut ? cutOff() : undefined) });
    await jest.advanceTimersByTimeAsync(100);
    expect(a.isLeader).toBe(true);
    let reads = 0;
    elector('b', store, {
      // b's second read waits 3 s before the store answers it: it returns a's renewal of up to
      // 0.5 s before the answer, and a is cut off from then on.
      before: async (call) => {
        if (call !== 'read' || ++reads !== 2) return;
        await sleep(3_000);
        cut = true;
      },
    });
    await jest.advanceTimersByTimeAsync(20_000);
    // Counted from when the read was sent, b would take over about 5 s after it, while a, whose
    // last renewal was written up to 3 s later, leads until that renewal + 4 s.
    expect(timeline).toEqual(['a started', 'a stopped', 'a lost', 'b started']);
  });

  it('when the wall clock is stepped back 5 s while leading and the leader is then cut off, then it stops leading within a lease duration of its last renewal', async () => {
    const store = new LeaseStore();
    let cut = false;
    const a = elector('a', store, { before: () => (cut ? cutOff() : undefined) });
    await jest.advanceTimersByTimeAsync(100);
    expect(a.isLeader).toBe(true);
    cut = true;
    // The renewal round that began at 0.5 s is failing when NTP steps this host's clock back 5 s:
    // Date moves, the monotonic clock (performance.now) does not.
    await jest.advanceTimersByTimeAsync(900);
    jest.setSystemTime(Date.now() - 5_000);
    // A standby on another host, whose clock was not stepped, may start a lease duration after the
    // acquisition written at 0. On wall time, a would lead until 0.5 + 3.5 + 5 s.
    await jest.advanceTimersByTimeAsync(TIMING.leaseDurationMs - 1_000);
    expect(timeline).toEqual(['a started', 'a stopped', 'a lost']);
  });
});
