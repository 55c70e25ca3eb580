import { CoordinationV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { waitFor } from '../../../local/wait.js';
import { LeaderElector, lostLeadershipGraceMs } from '../../../kube/leader-election.js';
import { createSilentLogger } from '../../../observability/logger.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import { TcpForwarder } from '../../helpers/tcp-forwarder.js';
import { handOverVersions, recordLeaseVersions } from '../../helpers/lease-versions.js';

const namespace = useTestNamespace('leader');

/**
 * Shorter than production's 15/10/2 s, but with seconds between "the old leader notices its loss"
 * (renew deadline plus a retry period) and "a standby takes over" (lease duration): a loaded CI
 * machine that runs a timer some hundreds of ms late must not be able to reorder the two.
 */
const TIMING = { leaseDurationMs: 5_000, renewDeadlineMs: 2_500, retryPeriodMs: 300 };

interface Timeline {
  entries: string[];
}

/** An elector's Lease requests: `sent` as it makes them, `read` once a read of the Lease answered. */
interface LeaseTraffic {
  sent: number;
  read: number;
}

/** `api`, counting the requests made through it into `traffic`. */
function counting(api: CustomObjectsApi, traffic: LeaseTraffic): CustomObjectsApi {
  return new Proxy(api, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        traffic.sent += 1;
        const answer = Promise.resolve(value.apply(target, args) as unknown);
        if (property === 'getNamespacedCustomObject')
          answer.then(
            () => (traffic.read += 1),
            () => undefined,
          );
        return answer;
      };
    },
  });
}

describe('LeaderElector', () => {
  const electors: LeaderElector[] = [];
  const traffic = new Map<LeaderElector, LeaseTraffic>();
  const forwarders: TcpForwarder[] = [];
  let leaseName = '';
  let counter = 0;

  beforeEach(() => {
    leaseName = `lease-${++counter}`;
  });

  afterEach(async () => {
    await Promise.all(electors.splice(0).map((elector) => elector.stop()));
    await Promise.all(forwarders.splice(0).map((forwarder) => forwarder.cut()));
  });

  function elector(
    identity: string,
    timeline: Timeline,
    kubeConfig: KubeConfig = testControlPlane().kubeConfig,
    options: {
      stopping?: () => Promise<void>;
      leaseDurationMs?: number;
      timing?: typeof TIMING;
      wrap?: (api: CustomObjectsApi) => CustomObjectsApi;
    } = {},
  ) {
    const counts: LeaseTraffic = { sent: 0, read: 0 };
    const api = kubeConfig.makeApiClient(CustomObjectsApi);
    const created = new LeaderElector({
      customObjects: counting(options.wrap?.(api) ?? api, counts),
      namespace: namespace.name,
      leaseName,
      identity,
      ...(options.timing ?? TIMING),
      leaseDurationMs: options.leaseDurationMs ?? (options.timing ?? TIMING).leaseDurationMs,
      logger: createSilentLogger(),
      onStartedLeading: () => timeline.entries.push(`${identity} started`),
      onStoppedLeading: async () => {
        timeline.entries.push(`${identity} stopped`);
        await options.stopping?.();
      },
      onLostLeadership: () => timeline.entries.push(`${identity} lost`),
    });
    electors.push(created);
    traffic.set(created, counts);
    created.start();
    return created;
  }

  /** Until `candidate` has read the Lease twice: its first attempt to acquire it is over. */
  async function triedToAcquire(candidate: LeaderElector): Promise<void> {
    await waitFor(
      'the standby to try for the Lease',
      async () => (traffic.get(candidate)!.read >= 2 ? true : undefined),
      {
        timeoutMs: 10_000,
        intervalMs: 20,
      },
    );
  }

  const readLease = () =>
    testControlPlane()
      .kubeConfig.makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: leaseName, namespace: namespace.name });

  async function firstLeader(...candidates: LeaderElector[]): Promise<LeaderElector> {
    return waitFor('a leader', async () => candidates.find((c) => c.isLeader), {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
  }

  it('when two electors compete for one Lease, then exactly one leads and the Lease names it', async () => {
    const timeline: Timeline = { entries: [] };
    const a = elector('a', timeline);
    const b = elector('b', timeline);
    const leader = await firstLeader(a, b);
    // Watch for longer than a lease: the other never starts leading as long as the leader renews.
    for (let i = 0; i < 30; i += 1) {
      expect([a.isLeader, b.isLeader].filter(Boolean)).toHaveLength(1);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(timeline.entries).toEqual([`${leader === a ? 'a' : 'b'} started`]);
    const lease = await readLease();
    expect(lease.spec?.holderIdentity).toBe(leader === a ? 'a' : 'b');
    expect(lease.spec?.leaseDurationSeconds).toBe(TIMING.leaseDurationMs / 1_000);
    // Renewed every retry period: renewTime is recent (a leader whose last renewal is older than
    // the renew deadline steps down).
    expect(Date.now() - new Date(lease.spec!.renewTime!).getTime()).toBeLessThan(TIMING.renewDeadlineMs);
  });

  it('when the leader stops, then it stops reconciling before releasing, and the other takes over well before the lease would expire', async () => {
    const timeline: Timeline = { entries: [] };
    // A lease far longer than a takeover after a release takes (about one retry period), so the
    // bound below excludes a takeover by expiry (15 s or later) with seconds to spare either side.
    const leaseDurationMs = 15_000;
    const a = elector('a', timeline, undefined, { leaseDurationMs });
    await firstLeader(a);
    const b = elector('b', timeline, undefined, { leaseDurationMs });
    await triedToAcquire(b);
    expect(b.isLeader).toBe(false);
    const recording = await recordLeaseVersions(namespace.name, leaseName);
    try {
      const stoppedAt = Date.now();
      await a.stop();
      await firstLeader(b);
      const takeoverMs = Date.now() - stoppedAt;
      // What release() writes, seen on the watch before b's version overwrites it: no holder, and
      // a 1 s duration for electors (client-go's) that wait out the duration even without a holder.
      const handOver = await handOverVersions(recording, 'a', 'b');
      expect(handOver[0]?.holderIdentity).toBeUndefined();
      expect(handOver[0]?.leaseDurationSeconds).toBe(1);
      expect(handOver.at(-1)?.holderIdentity).toBe('b');
      expect(takeoverMs).toBeLessThan(leaseDurationMs / 2);
    } finally {
      recording.stop();
    }
    expect(timeline.entries).toEqual(['a started', 'a stopped', 'b started']);
    const lease = await readLease();
    expect(lease.spec?.holderIdentity).toBe('b');
    expect(lease.spec?.leaseTransitions).toBe(1);
  });

  it('when the leader can no longer reach the API server, then it stops leading within the renew deadline and the other takes over after the lease duration', async () => {
    const forwarder = await TcpForwarder.start(testControlPlane().server);
    forwarders.push(forwarder);
    const timeline: Timeline = { entries: [] };
    const a = elector('a', timeline, forwarder.kubeConfigThrough(testControlPlane().kubeConfig));
    await firstLeader(a);
    const b = elector('b', timeline);
    await triedToAcquire(b);
    const cutAt = Date.now();
    await forwarder.cut();
    await waitFor('a to step down', async () => (a.isLeader ? undefined : true), {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    const steppedDownMs = Date.now() - cutAt;
    await firstLeader(b);
    const takeoverMs = Date.now() - cutAt;
    // The margins are wide for a loaded machine; stepping down still comes before the lease ends.
    expect(steppedDownMs).toBeLessThanOrEqual(TIMING.renewDeadlineMs + TIMING.retryPeriodMs + 1_000);
    expect(takeoverMs).toBeGreaterThanOrEqual(TIMING.leaseDurationMs - TIMING.retryPeriodMs - 100);
    expect(takeoverMs).toBeLessThan(TIMING.leaseDurationMs + 3 * TIMING.retryPeriodMs + 1_500);
    // Never two leaders: a stopped, and reported the loss, before b started.
    expect(timeline.entries).toEqual(['a started', 'a stopped', 'a lost', 'b started']);
    // Once reachable again, a stays out: its process would have exited on the loss.
    await forwarder.restore();
    const sentByA = traffic.get(a)!.sent;
    const sentByB = traffic.get(b)!.sent;
    // b renewing twice more takes over a retry period, in which a, were it standing again, would try too.
    await waitFor('b to renew twice', async () => (traffic.get(b)!.sent >= sentByB + 4 ? true : undefined), {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    expect(traffic.get(a)!.sent).toBe(sentByA);
    expect(a.isLeader).toBe(false);
    expect(b.isLeader).toBe(true);
  });

  it("when the API server answers the leader's renewal later than the renew deadline less a retry period, but within the deadline, then the leader keeps the Lease, as client-go's does", async () => {
    // client-go's renew(): a round begins a retry period after the last renewal and may try for
    // the whole renew deadline, 12 s here. Measured from the last renewal instead, this renewal
    // would have 6 s (the operator lost its Lease so, to renewals the API server answered after
    // 7.8 s at load 30). Answered at 8 s: 2 s past the old budget, 4 s before the deadline, room
    // for a real write and late timers on a loaded machine either way.
    const timing = { leaseDurationMs: 30_000, renewDeadlineMs: 12_000, retryPeriodMs: 6_000 };
    const answerAfterMs = 8_000;
    const replaces = { sent: 0, answered: 0 };
    let roundStartedAt = 0;
    // The first renewal's Lease write answers answerAfterMs after its round began (its read was sent).
    const slowFirstRenewal = (api: CustomObjectsApi): CustomObjectsApi =>
      new Proxy(api, {
        get(target, property, receiver) {
          const value: unknown = Reflect.get(target, property, receiver);
          if (typeof value !== 'function') return value;
          return async (...args: unknown[]) => {
            if (property === 'getNamespacedCustomObject') roundStartedAt = Date.now();
            if (property !== 'replaceNamespacedCustomObject') return value.apply(target, args) as unknown;
            const first = ++replaces.sent === 1;
            const [answer] = await Promise.all([
              value.apply(target, args) as unknown,
              first &&
                new Promise((resolve) => setTimeout(resolve, roundStartedAt + answerAfterMs - Date.now())),
            ]);
            replaces.answered += 1;
            return answer;
          };
        },
      });
    const timeline: Timeline = { entries: [] };
    const a = elector('a', timeline, undefined, { timing, wrap: slowFirstRenewal });
    await firstLeader(a);
    await waitFor(
      'a to renew after the slow renewal, or to lose the Lease',
      async () => (replaces.answered >= 2 || timeline.entries.includes('a lost') ? true : undefined),
      { timeoutMs: 45_000, intervalMs: 20 },
    );
    expect(timeline.entries).toEqual(['a started']);
    expect(a.isLeader).toBe(true);
  });

  it('when the leader loses the Lease while a reconcile hangs, then it reports the loss after the grace, without waiting for the reconcile, before the other takes over', async () => {
    const forwarder = await TcpForwarder.start(testControlPlane().server);
    forwarders.push(forwarder);
    const timeline: Timeline = { entries: [] };
    let lostAt = 0;
    let stoppingAt = 0;
    const hanging = new Promise<void>(() => undefined);
    const a = elector('a', timeline, forwarder.kubeConfigThrough(testControlPlane().kubeConfig), {
      stopping: () => {
        stoppingAt = Date.now();
        return hanging;
      },
    });
    await firstLeader(a);
    const b = elector('b', timeline);
    await forwarder.cut();
    await waitFor(
      'a to report the loss',
      async () => (timeline.entries.includes('a lost') ? true : undefined),
      {
        timeoutMs: 10_000,
        intervalMs: 5,
      },
    );
    lostAt = Date.now();
    const graceMs = lostLeadershipGraceMs(TIMING);
    expect(graceMs).toBe(1_000);
    expect(lostAt - stoppingAt).toBeGreaterThanOrEqual(graceMs - 20);
    // The reconcile never ends: reporting at all is not waiting for it; soon after the grace.
    expect(lostAt - stoppingAt).toBeLessThan(graceMs + 1_000);
    await firstLeader(b);
    expect(timeline.entries).toEqual(['a started', 'a stopped', 'a lost', 'b started']);
  });
});
