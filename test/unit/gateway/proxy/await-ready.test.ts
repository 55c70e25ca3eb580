import { jest } from '@jest/globals';
import {
  HoldQueueFullError,
  InstanceUnschedulableError,
  WakeTimeoutError,
} from '../../../../gateway/http/errors.js';
import { AwaitReady } from '../../../../gateway/proxy/await-ready.js';
import type { AddressListener, UpstreamAddress } from '../../../../gateway/proxy/endpoint-cache.js';
import { createSilentLogger } from '../../../../observability/logger.js';

/** An address source the test sets by hand, in place of the pod informer. */
class Addresses {
  private readonly addresses = new Map<string, UpstreamAddress>();
  private readonly unschedulable = new Map<string, string>();
  private listener: AddressListener | undefined;
  addressOf(key: string): UpstreamAddress | undefined {
    return this.addresses.get(key);
  }
  unschedulableOf(key: string): string | undefined {
    return this.unschedulable.get(key);
  }
  /** The scheduler's verdict on the instance's pod, as the pod informer would bring it. */
  setUnschedulable(key: string, message: string): void {
    this.unschedulable.set(key, message);
    this.listener?.(key, this.addresses.get(key));
  }
  onChange(listener: AddressListener): () => void {
    this.listener = listener;
    return () => (this.listener = undefined);
  }
  set(key: string, address: UpstreamAddress | undefined): void {
    if (address) this.addresses.set(key, address);
    else this.addresses.delete(key);
    this.listener?.(key, address);
  }
}

const ref = { namespace: 'ns', name: 'app' };
const KEY = 'ns/app';

function setup(
  options: {
    probe?: (origin: string, firstStart: boolean) => Promise<boolean>;
    limit?: number;
    timeoutMs?: number;
    firstStart?: boolean;
  } = {},
) {
  const addresses = new Addresses();
  const released: number[] = [];
  const gate = new AwaitReady({
    endpoints: addresses,
    probe: options.probe ?? (async () => true),
    isFirstStart: () => options.firstStart ?? false,
    holdQueueLimit: options.limit ?? 100,
    timeoutMs: options.timeoutMs ?? 5_000,
    probeIntervalMs: 5,
    sparseProbeIntervalMs: 50,
    onReleased: (_instance, ms) => released.push(ms),
    logger: createSilentLogger(),
  });
  return { addresses, gate, released };
}

describe('AwaitReady', () => {
  it('when the endpoint is ready, then requests go through at once without being held', () => {
    const { addresses, gate } = setup();
    expect(gate.readyOrigin(KEY)).toBeUndefined();
    addresses.set(KEY, { origin: 'http://10.0.0.1:5984', ready: true });
    expect(gate.readyOrigin(KEY)).toBe('http://10.0.0.1:5984');
  });

  it('when requests are held and the address appears not ready but /_up answers, then they are released in arrival order, once', async () => {
    let up = false;
    const { addresses, gate, released } = setup({ probe: async () => up });
    const order: number[] = [];
    const held = [0, 1, 2, 3, 4].map((i) => gate.hold(ref).then((r) => (order.push(i), r)));
    addresses.set(KEY, { origin: 'http://10.0.0.1:5984', ready: false });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(order).toEqual([]);
    up = true;
    const results = await Promise.all(held);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(results.every((r) => r.origin === 'http://10.0.0.1:5984' && r.heldMs >= 0)).toBe(true);
    expect(released).toHaveLength(1);
    // Verified by the probe: later requests need no hold although the endpoint is still not ready.
    expect(gate.readyOrigin(KEY)).toBe('http://10.0.0.1:5984');
  });

  it('when the instance is at its first start, then neither its ready pod nor /_up releases a request: the first-start probe does', async () => {
    const asked: boolean[] = [];
    let served = false;
    const { addresses, gate } = setup({
      probe: async (_origin, firstStart) => (asked.push(firstStart), !firstStart || served),
      firstStart: true,
    });
    addresses.set(KEY, { origin: 'http://10.0.0.1:5984', ready: true });
    expect(gate.readyOrigin(KEY, true)).toBeUndefined();
    let releasedAt: string | undefined;
    const held = gate.hold(ref).then((r) => (releasedAt = r.origin));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(releasedAt).toBeUndefined();
    expect(new Set(asked)).toEqual(new Set([true]));
    served = true;
    await held;
    expect(releasedAt).toBe('http://10.0.0.1:5984');
    expect(gate.readyOrigin(KEY, true)).toBe('http://10.0.0.1:5984');
  });

  it('when more requests arrive than the queue holds, then the extra ones are refused at once', async () => {
    const { gate } = setup({ limit: 2, timeoutMs: 50 });
    const first = gate.hold(ref);
    const second = gate.hold(ref);
    await expect(gate.hold(ref)).rejects.toBeInstanceOf(HoldQueueFullError);
    await expect(first).rejects.toBeInstanceOf(WakeTimeoutError);
    await expect(second).rejects.toBeInstanceOf(WakeTimeoutError);
  });

  it('when the instance never comes up, then each held request is refused at its deadline', async () => {
    const { gate } = setup({ timeoutMs: 80 });
    const started = Date.now();
    await expect(gate.hold(ref)).rejects.toBeInstanceOf(WakeTimeoutError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(75);
    expect(gate.isHolding(KEY)).toBe(false);
  });

  it('when a ready address refuses connections, then it is probed again before it is used', async () => {
    let up = false;
    const { addresses, gate } = setup({ probe: async () => up });
    addresses.set(KEY, { origin: 'http://10.0.0.1:5984', ready: true });
    gate.invalidate(KEY, 'http://10.0.0.1:5984');
    expect(gate.readyOrigin(KEY)).toBeUndefined();
    const held = gate.hold(ref);
    up = true;
    await expect(held).resolves.toMatchObject({ origin: 'http://10.0.0.1:5984' });
  });

  it('when a held request is aborted or the instance fails, then the request ends with that reason', async () => {
    const { gate } = setup();
    const controller = new AbortController();
    const aborted = gate.hold(ref, controller.signal);
    controller.abort(new Error('client left'));
    await expect(aborted).rejects.toThrow('client left');
    const failed = gate.hold(ref);
    gate.fail(KEY, new Error('deleted'));
    await expect(failed).rejects.toThrow('deleted');
  });

  it('when the scheduler cannot place the pod, then a new request is refused at once with its message', async () => {
    const { addresses, gate } = setup({ timeoutMs: 60_000 });
    addresses.setUnschedulable(
      KEY,
      "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.",
    );
    const refused = gate.hold(ref);
    await expect(refused).rejects.toBeInstanceOf(InstanceUnschedulableError);
    await expect(refused).rejects.toThrow(
      "cannot be scheduled: 0/2 nodes are available: 2 node(s) didn't match",
    );
    expect(gate.isHolding(KEY)).toBe(false);
  });

  it('when requests are held and the scheduler then gives up on the pod, then they end at once, not at their deadline', async () => {
    const { addresses, gate } = setup({ timeoutMs: 60_000 });
    const started = Date.now();
    const held = [gate.hold(ref), gate.hold(ref)];
    addresses.setUnschedulable(KEY, '0/2 nodes are available: 2 Insufficient cpu.');
    for (const request of held) await expect(request).rejects.toBeInstanceOf(InstanceUnschedulableError);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(gate.isHolding(KEY)).toBe(false);
  });

  describe('the probe schedule of a booting instance (probe-schedule.ts)', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    /**
     * One wake whose engine answers /_up `bootMs` after its pod's address appears: the probes it
     * took and how long after the engine's first answer the held request was released.
     */
    async function wake(
      { addresses, gate }: ReturnType<typeof setup>,
      state: { upAt: number; probes: number },
      bootMs: number,
    ): Promise<{ probes: number; lateMs: number }> {
      addresses.set(KEY, undefined);
      state.probes = 0;
      state.upAt = Infinity;
      let releasedAt: number | undefined;
      void gate.hold(ref).then(() => (releasedAt = Date.now()));
      state.upAt = Date.now() + bootMs;
      addresses.set(KEY, { origin: 'http://10.0.0.1:5984', ready: false });
      while (releasedAt === undefined) await jest.advanceTimersByTimeAsync(1);
      return { probes: state.probes, lateMs: releasedAt - state.upAt };
    }

    function booting() {
      const state = { upAt: Infinity, probes: 0 };
      const gateway = setup({
        timeoutMs: 60_000,
        probe: async () => {
          state.probes += 1;
          return Date.now() >= state.upAt;
        },
      });
      return { gateway, state };
    }

    it('when the instance has booted before, then its next boot is probed sparsely until three quarters of its earliest boot, and released within one interval of its answer', async () => {
      const { gateway, state } = booting();
      const first = await wake(gateway, state, 400);
      // Never seen booting: every 5 ms throughout.
      expect(first.probes).toBeGreaterThanOrEqual(80);
      expect(first.lateMs).toBeLessThanOrEqual(5);
      const second = await wake(gateway, state, 400);
      // 50 ms apart until 300 ms (7 probes), then 5 ms apart to 400 ms (20): not 80.
      expect(second.probes).toBeLessThanOrEqual(30);
      expect(second.lateMs).toBeLessThanOrEqual(5);
    });

    it('when a boot is much faster than the recent ones, then it is released at most one sparse interval late, and a deleted instance is probed every interval again', async () => {
      const { gateway, state } = booting();
      await wake(gateway, state, 400);
      const fast = await wake(gateway, state, 100);
      expect(fast.lateMs).toBeLessThanOrEqual(50);
      gateway.gate.fail(KEY, new Error('deleted'));
      const afterDelete = await wake(gateway, state, 400);
      expect(afterDelete.probes).toBeGreaterThanOrEqual(80);
    });
  });
});
