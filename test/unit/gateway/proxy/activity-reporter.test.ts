import { jest } from '@jest/globals';
import type { ActivityRenewal } from '../../../../gateway/proxy/activity-lease.js';
import { ActivityReporter } from '../../../../gateway/proxy/activity-reporter.js';
import { createSilentLogger } from '../../../../observability/logger.js';

const KEY = 'ns/app';
const ref = { namespace: 'ns', name: 'app' };
const instance = { ...ref, uid: 'u' };
/** Time passes on jest's fake clock (setTimeout and Date.now), so the counts below are exact, not load-dependent. */
const sleep = (ms: number) => jest.advanceTimersByTimeAsync(ms);

function setup(intervalMs = 100, postpone?: (instanceKey: string) => boolean) {
  const renewals: ActivityRenewal[] = [];
  const reporter = new ActivityReporter({
    write: async (renewal) => void renewals.push(renewal),
    intervalMs,
    holderIdentity: 'gw-1',
    ...(postpone ? { postpone } : {}),
    logger: createSilentLogger(),
  });
  return { reporter, renewals };
}

/**
 * A reporter whose instance is waking (its renewals postponed) until `wake()`, at a 50 ms interval,
 * with one request held for it.
 */
function heldWhileWaking() {
  let waking = true;
  const { reporter, renewals } = setup(50, () => waking);
  reporter.begin(KEY, ref, 'u');
  return { reporter, renewals, wake: () => void (waking = false) };
}

/** The last request ends: once its last renewal has gone out, no more come (then the reporter stops). */
async function endsThenSettles(
  reporter: ActivityReporter,
  renewals: readonly ActivityRenewal[],
): Promise<void> {
  reporter.end(KEY);
  await sleep(120);
  const settled = renewals.length;
  await sleep(150);
  expect(renewals.length).toBe(settled);
  await reporter.stop();
}

describe('ActivityReporter', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('when the first request after a quiet time arrives, then the Lease is renewed at once', async () => {
    const { reporter, renewals } = setup();
    reporter.begin(KEY, ref, 'u');
    reporter.end(KEY);
    await sleep(5);
    expect(renewals).toHaveLength(1);
    expect(renewals[0]).toMatchObject({ instance, holderIdentity: 'gw-1', openStreams: 1 });
    await reporter.stop();
  });

  it('when a thousand requests arrive within one interval, then there are at most two renewals for them', async () => {
    const { reporter, renewals } = setup();
    for (let i = 0; i < 1000; i++) {
      reporter.begin(KEY, ref, 'u');
      reporter.end(KEY);
    }
    await sleep(150);
    expect(renewals.length).toBeGreaterThanOrEqual(1);
    expect(renewals.length).toBeLessThanOrEqual(2);
    await sleep(250);
    expect(renewals.length).toBeLessThanOrEqual(2); // no requests, nothing open: renewals stop
    await reporter.stop();
  });

  it('when a response stays open, then it is renewed every interval until it ends', async () => {
    const { reporter, renewals } = setup(50);
    reporter.begin(KEY, ref, 'u');
    await sleep(280);
    expect(renewals.length).toBeGreaterThanOrEqual(4);
    expect(reporter.openCount(KEY)).toBe(1);
    await endsThenSettles(reporter, renewals);
  });

  it('when the instance is waking while its request is held, then no renewal is sent until it is up, and the first comes within an interval of that', async () => {
    const { reporter, renewals, wake } = heldWhileWaking();
    await sleep(400);
    expect(renewals).toHaveLength(0);
    wake();
    await sleep(50);
    expect(renewals).toHaveLength(1);
    expect(renewals[0]).toMatchObject({ instance, openStreams: 1 });
    await endsThenSettles(reporter, renewals);
  });

  it('when a held request gives up while the instance is still waking, then nothing is renewed, and a request once it is up renews at once', async () => {
    const { reporter, renewals, wake } = heldWhileWaking();
    await sleep(120);
    reporter.end(KEY);
    await sleep(300);
    expect(renewals).toHaveLength(0);
    wake();
    reporter.begin(KEY, ref, 'u');
    await sleep(5);
    expect(renewals).toHaveLength(1);
    reporter.end(KEY);
    await reporter.stop();
  });
});
