import type { Redis } from 'ioredis';
import { waitFor } from '../../../../local/wait.js';
import { queueKeys, type QueueKeys } from '../../../../gateway/queue/core/keys.js';
import { buildRawStep, type WorkflowRunState } from '../../../../gateway/queue/core/workflow-message.js';
import { WorkflowRunStore } from '../../../../gateway/queue/stores/workflow-run-store.js';
import { useDeliveryFixture } from '../../../helpers/queue/delivery-fixture.js';

const DAY = 86_400_000;

/** `INFO commandstats` calls of a command so far. */
async function callsOf(redis: Redis, command: string): Promise<number> {
  const info = await redis.info('commandstats');
  return Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
}

describe('retention of finished workflow runs on a real Redis', () => {
  const f = useDeliveryFixture('workflow-retention');

  /** Starts a run created at `createdAt` and, unless `finishedAt` is left out, ends it then. */
  async function run(
    runs: WorkflowRunStore,
    runId: string,
    times: { createdAt: number; finishedAt?: number; state?: Exclude<WorkflowRunState, 'RUN_STARTED'> },
  ): Promise<void> {
    await runs.start({
      runId,
      config: { url: 'http://127.0.0.1:9/wf', headers: {}, retries: 0 },
      createdAt: times.createdAt,
      firstStep: buildRawStep(`msg_${runId}`, Buffer.from('{}'), times.createdAt),
    });
    await runs.append(runId, [buildRawStep(`msg_${runId}_1`, Buffer.from('"step"'), times.createdAt + 1)]);
    if (times.finishedAt !== undefined)
      expect(await runs.finish(runId, { state: times.state ?? 'RUN_SUCCESS', at: times.finishedAt })).toBe(
        true,
      );
  }

  /** Whether anything of the run is left: its hash, steps, counted step ids, early notices, places in either order. */
  async function traces(k: QueueKeys, runId: string): Promise<string[]> {
    const left: string[] = [];
    if ((await f.redis.exists(k.workflowNotices(runId))) === 1) left.push('notices');
    if ((await f.redis.exists(k.workflowRun(runId))) === 1) left.push('hash');
    if ((await f.redis.exists(k.workflowSteps(runId))) === 1) left.push('steps');
    if ((await f.redis.exists(k.workflowStepIds(runId))) === 1) left.push('step ids');
    if ((await f.redis.zscore(k.workflowRunOrder, runId)) !== null) left.push('order');
    if ((await f.redis.zscore(k.workflowRunsFinished, runId)) !== null) left.push('finished');
    return left;
  }

  it('when runs finished before the retention or beyond the count, then trim drops the earliest finished with their steps and places, keeps running runs and the later finished, and reads no key space', async () => {
    const { config } = f.freshConfig();
    const k = queueKeys(config.keyPrefix);
    const runs = new WorkflowRunStore(f.redis, k);
    const now = Date.now();
    // Created in this order; finished in another: retention goes by the end, not the start.
    await run(runs, 'wfr_old-end', {
      createdAt: now - 5 * DAY,
      finishedAt: now - 4 * DAY,
      state: 'RUN_FAILED',
    });
    await run(runs, 'wfr_long-running', { createdAt: now - 6 * DAY });
    await run(runs, 'wfr_a', { createdAt: now - 3 * DAY, finishedAt: now - 3_000, state: 'RUN_CANCELED' });
    await run(runs, 'wfr_b', { createdAt: now - 9 * DAY, finishedAt: now - 2_000 });
    await run(runs, 'wfr_c', { createdAt: now - 2 * DAY, finishedAt: now - 1_000 });
    await run(runs, 'wfr_d', { createdAt: now - 1 * DAY, finishedAt: now - 500 });
    // An event notified to a run that never waited for it: it goes with the run.
    await f.redis.hset(k.workflowNotices('wfr_a'), 'evt_unclaimed', '{}');
    const [scans, keys] = [await callsOf(f.redis, 'scan'), await callsOf(f.redis, 'keys')];

    // Three days kept, at most two finished runs: wfr_old-end is past the retention, and of the
    // four left wfr_a and wfr_b finished earliest (though wfr_b was created first of all).
    expect(await runs.trim({ retentionMs: 3 * DAY, maxCount: 2 }, now)).toBe(3);
    for (const dropped of ['wfr_old-end', 'wfr_a', 'wfr_b']) expect(await traces(k, dropped)).toEqual([]);
    for (const kept of ['wfr_c', 'wfr_d'])
      expect(await traces(k, kept)).toEqual(['hash', 'steps', 'step ids', 'order', 'finished']);
    // A running run is never dropped, however old, and does not count.
    expect(await traces(k, 'wfr_long-running')).toEqual(['hash', 'steps', 'step ids', 'order']);
    expect((await runs.get('wfr_long-running'))?.state).toBe('RUN_STARTED');
    expect(await runs.steps('wfr_long-running')).toHaveLength(2);
    expect(await runs.trim({ retentionMs: 3 * DAY, maxCount: 2 }, now)).toBe(0);
    expect(await callsOf(f.redis, 'scan')).toBe(scans);
    expect(await callsOf(f.redis, 'keys')).toBe(keys);
  });

  it('when 1,200 runs are over the count, then one trim call drops all 1,200 in bounded passes', async () => {
    const { config } = f.freshConfig();
    const k = queueKeys(config.keyPrefix);
    const runs = new WorkflowRunStore(f.redis, k);
    const now = Date.now();
    for (let i = 0; i < 1_300; i++)
      await run(runs, `wfr_bulk-${String(i).padStart(4, '0')}`, {
        createdAt: now - 10_000,
        finishedAt: now - 5_000 + i,
      });
    expect(await runs.trim({ retentionMs: DAY, maxCount: 100 }, now)).toBe(1_200);
    expect(await f.redis.zcard(k.workflowRunsFinished)).toBe(100);
    expect(await f.redis.zcard(k.workflowRunOrder)).toBe(100);
    expect(await f.redis.zrange(k.workflowRunsFinished, 0, '0')).toEqual(['wfr_bulk-1200']);
    expect(await traces(k, 'wfr_bulk-1199')).toEqual([]);
  });

  it("when a binding's limits keep two finished runs, then the delivery worker's maintenance pass trims the rest without any other call", async () => {
    const { config } = f.freshConfig({ pollIntervalMs: 100 });
    const k = queueKeys(config.keyPrefix);
    const runs = new WorkflowRunStore(f.redis, k);
    const now = Date.now();
    for (const [i, id] of ['wfr_m1', 'wfr_m2', 'wfr_m3', 'wfr_m4'].entries())
      await run(runs, id, { createdAt: now - 1_000, finishedAt: now - 500 + i });
    f.startWorker({
      config,
      target: { ...f.target, limits: { ...f.target.limits, maxWorkflowRuns: 2 } },
    });
    await waitFor(
      'the maintenance pass to trim the finished runs to two',
      async () => ((await f.redis.zcard(k.workflowRunsFinished)) === 2 ? true : undefined),
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    expect(await f.redis.zrange(k.workflowRunOrder, 0, '-1')).toEqual(['wfr_m3', 'wfr_m4']);
    expect(await traces(k, 'wfr_m1')).toEqual([]);
  });
});
