/**
 * Upstash Workflow on the queue (issue 28's benchmarks), through the unchanged @upstash/workflow
 * 1.3.3: its Client triggers, its Express serve() runs the steps (in this process, verifying every
 * delivery's signature), one gateway process (delivery workers on) on a Redis with AOF everysec.
 *   1. A 10-step sequential workflow against 10 plain publish-and-deliver round trips (the
 *      @upstash/qstash Client's publish to a receiver on loopback, one at a time), in rounds that
 *      alternate the two: each step's time (trigger or the last step's function to this step's
 *      function) against a round trip's time (publish to arrival), p50 and p99, as ratios; and a
 *      run end to end (trigger to the gateway's finish) against 10 round trips one after another.
 *   2. N runs at once of a 5-step workflow whose third step is a parallel fan-out of 10, against
 *      as many plain messages as those runs record steps, published in batches and delivered to
 *      a receiver: runs/s, steps/s, p99 run time, Redis memory per finished run, gateway CPU per
 *      step (per plain message for the anchor).
 *   3. W runs waiting on an event each (context.waitForEvent), then notified (client.notify, NOTIFY_IN_FLIGHT
 *      at a time): notify-to-resume latency (the notify sent to the step after the wait running)
 *      p50/p99, beside part 1's plain round trip.
 * Figures are medians of the rounds with their spread; the summary sets each beside its goal.
 *
 *   npx tsx bench/workflow.ts   (WORKFLOW_BENCH_ROUNDS=5 rounds of WORKFLOW_BENCH_RUNS=4 sequential
 *                                runs; WORKFLOW_BENCH_CONCURRENT=50 runs at once in
 *                                WORKFLOW_BENCH_FANOUT_ROUNDS=3 rounds; WORKFLOW_BENCH_WAITERS=200)
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client as QStashClient } from '@upstash/qstash';
import { Client, type WorkflowContext } from '@upstash/workflow';
import { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../local/redis-server.js';
import { waitFor } from '../local/wait.js';
import { queueKeys } from '../gateway/queue/core/keys.js';
import type { WorkflowRunRecord } from '../gateway/queue/core/workflow-message.js';
import { WorkflowRunStore } from '../gateway/queue/stores/workflow-run-store.js';
import { spawnQueueGateway, type QueueGatewayProcess } from '../test/helpers/queue/spawn-queue-gateway.js';
import { testQueueTarget } from '../test/helpers/queue/test-queue-target.js';
import { startWorkflowEndpoints, type WorkflowEndpoints } from '../test/helpers/queue/workflow-endpoints.js';
import { startArrivalReceiver, type ArrivalReceiver } from './lib/arrival-receiver.js';
import { cpuSeconds } from './lib/process-usage.js';
import { median, quantile, round } from './lib/stats.js';
import { buildQueueGatewayEnv } from './lib/gateway-bench-env.js';

const KEY_PREFIX = '{wfbench}:';
const ROUNDS = Number(process.env.WORKFLOW_BENCH_ROUNDS ?? '5');
const RUNS_PER_ROUND = Number(process.env.WORKFLOW_BENCH_RUNS ?? '4');
const CONCURRENT = Number(process.env.WORKFLOW_BENCH_CONCURRENT ?? '50');
const FANOUT_ROUNDS = Number(process.env.WORKFLOW_BENCH_FANOUT_ROUNDS ?? '3');
const WAITERS = Number(process.env.WORKFLOW_BENCH_WAITERS ?? '200');
const NOTIFY_IN_FLIGHT = 10;
const STEPS = 10;
const FANOUT = 10;
/** The fan-out workflow's step functions: prepare, the 10 parts, combine, save, report. */
const FANOUT_STEPS = 4 + FANOUT;
const BATCH = 100;
const BODY = { event: 'order.created', id: 12345, amount: 42.5, currency: 'EUR' };
/** Issue 28's goal: a workflow step costs at most 1.5x a plain publish-and-deliver round trip. */
const STEP_TO_ROUND_TRIP_GOAL = 1.5;

const now = (): number => performance.timeOrigin + performance.now();
const spread = (values: number[], digits = 1): string =>
  `[${round(Math.min(...values), digits)}-${round(Math.max(...values), digits)}]`;

/** When each step function of a run first ran (epoch ms, sub-ms), by run id. */
const stepTimes = new Map<string, number[]>();
function stamp(context: WorkflowContext<unknown>, index: number): number {
  const times = stepTimes.get(context.workflowRunId) ?? [];
  times[index] ??= now();
  stepTimes.set(context.workflowRunId, times);
  return index;
}

async function sequential(context: WorkflowContext<unknown>): Promise<number> {
  let last = 0;
  for (let i = 0; i < STEPS; i++) last = await context.run(`step-${i}`, () => stamp(context, i));
  return last;
}

async function fanOut(context: WorkflowContext<unknown>): Promise<number> {
  const base = await context.run('prepare', () => 1);
  const parts = await Promise.all(
    Array.from({ length: FANOUT }, (_, i) => context.run(`part-${i}`, () => base + i)),
  );
  const sum = await context.run('combine', () => parts.reduce((a, b) => a + b, 0));
  await context.run('save', () => ({ saved: sum }));
  return context.run('report', () => sum * 2);
}

/** When the step after each run's wait first ran (epoch ms, sub-ms), by the run's event id. */
const resumedAt = new Map<string, number>();
const eventOf = (context: WorkflowContext<unknown>): string =>
  `evt-${(context.requestPayload as { key: number }).key}`;

async function waiter(context: WorkflowContext<unknown>): Promise<void> {
  await context.waitForEvent('wait', eventOf(context), { timeout: '1h' });
  await context.run('resumed', () => {
    if (!resumedAt.has(eventOf(context))) resumedAt.set(eventOf(context), now());
  });
}

interface Harness {
  gateway: QueueGatewayProcess;
  endpoints: WorkflowEndpoints;
  receiver: ArrivalReceiver;
  workflows: Client;
  qstash: QStashClient;
  runs: WorkflowRunStore;
  inspect: Redis;
}

/** Waits for every run in `runIds` to end; their records. */
async function finished(h: Harness, runIds: string[], timeoutMs: number): Promise<WorkflowRunRecord[]> {
  return waitFor(
    `${runIds.length} workflow runs to finish`,
    async () => {
      const records = await Promise.all(runIds.map((id) => h.runs.get(id)));
      const failed = records.find((r) => r && r.state !== 'RUN_STARTED' && r.state !== 'RUN_SUCCESS');
      if (failed) throw new Error(`run ${failed.runId} ended ${failed.state}: ${failed.failure ?? ''}`);
      return records.every((r) => r?.state === 'RUN_SUCCESS') ? (records as WorkflowRunRecord[]) : undefined;
    },
    { timeoutMs, intervalMs: runIds.length > 1 ? 100 : 2 },
  );
}

interface SequentialRound {
  /** Each step's time and each plain round trip's, ms. */
  stepMs: number[];
  roundTripMs: number[];
  /** Trigger to the gateway's finish of each run, and 10 round trips one after another, ms. */
  runMs: number[];
  chainMs: number[];
}

async function sequentialRound(h: Harness): Promise<SequentialRound> {
  const result: SequentialRound = { stepMs: [], roundTripMs: [], runMs: [], chainMs: [] };
  for (let r = 0; r < RUNS_PER_ROUND; r++) {
    const started = now();
    const { workflowRunId } = await h.workflows.trigger({
      url: h.endpoints.expressUrl('sequential'),
      body: BODY,
    });
    const [run] = await finished(h, [workflowRunId], 30_000);
    const times = stepTimes.get(workflowRunId)!;
    result.runMs.push(run!.finishedAt! - started);
    times.forEach((at, i) => result.stepMs.push(at - (i === 0 ? started : times[i - 1]!)));

    const chainStarted = now();
    for (let i = 0; i < STEPS; i++) {
      const sent = now();
      const arrived = h.receiver.next();
      await h.qstash.publishJSON({ url: `${h.receiver.url}/plain`, body: { ...BODY, i } });
      result.roundTripMs.push((await arrived) - sent);
    }
    result.chainMs.push(now() - chainStarted);
  }
  return result;
}

interface ConcurrentRound {
  runsPerSecond: number;
  stepsPerSecond: number;
  p99RunMs: number;
  /**
   * used_memory grown per finished run, beside the run's own keys (MEMORY USAGE of its hash and
   * steps) and the event log's growth (capped at the binding's maxEvents; the allocator's figure
   * and the stream's own count differ by what the allocator reuses).
   */
  memoryPerRun: number;
  runKeysPerRun: number;
  eventsPerRun: number;
  cpuPerStepUs: number;
  /** CPU per step of this process: the SDK's serve() and Client, and the bench's own polling. */
  sdkCpuPerStepUs: number;
  /** The anchor: as many plain messages as the runs recorded steps, published in batches. */
  plainPerSecond: number;
  cpuPerPlainUs: number;
}

async function usedMemory(inspect: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await inspect.info('memory'))?.[1]);
}

async function concurrentRound(h: Harness): Promise<ConcurrentRound> {
  const k = queueKeys(KEY_PREFIX);
  // SAMPLES 0: every entry of the stream counted, not an estimate from a few.
  const eventBytes = async () => Number(await h.inspect.memory('USAGE', k.events, 'SAMPLES', 0));
  const [memoryBefore, eventsBefore] = [await usedMemory(h.inspect), await eventBytes()];
  const [cpuBefore, sdkCpuBefore, started] = [cpuSeconds(h.gateway.proc.pid), cpuSeconds(process.pid), now()];
  const url = h.endpoints.expressUrl('fanout');
  const triggered = await Promise.all(
    Array.from({ length: Math.ceil(CONCURRENT / BATCH) }, async (_, b) => {
      const count = Math.min(BATCH, CONCURRENT - b * BATCH);
      const sent = now();
      const ids = await h.workflows.trigger(Array.from({ length: count }, () => ({ url, body: BODY })));
      return ids.map(({ workflowRunId }) => ({ workflowRunId, sent }));
    }),
  );
  const runIds = triggered.flat();
  const records = await finished(
    h,
    runIds.map((r) => r.workflowRunId),
    600_000,
  );
  const elapsedMs = Math.max(...records.map((r) => r.finishedAt!)) - started;
  const cpu = cpuSeconds(h.gateway.proc.pid) - cpuBefore;
  const sdkCpu = cpuSeconds(process.pid) - sdkCpuBefore;
  const stepCounts = await Promise.all(runIds.map((r) => h.inspect.llen(k.workflowSteps(r.workflowRunId))));
  // The first entry of a run's steps is its initial payload.
  const steps = stepCounts.reduce((a, b) => a + b - 1, 0);
  const memoryPerRun = ((await usedMemory(h.inspect)) - memoryBefore) / runIds.length;
  const eventsPerRun = ((await eventBytes()) - eventsBefore) / runIds.length;
  const sample = runIds.slice(0, 100);
  const keyBytes = await Promise.all(
    sample
      .flatMap((r) => [k.workflowRun(r.workflowRunId), k.workflowSteps(r.workflowRunId)])
      .map(async (key) => Number(await h.inspect.memory('USAGE', key))),
  );
  const runTimes = records.map((r, i) => r.finishedAt! - runIds[i]!.sent);

  const plainCount = steps;
  const arrivedBefore = h.receiver.arrivals.length;
  const [plainCpu, plainStarted] = [cpuSeconds(h.gateway.proc.pid), now()];
  await Promise.all(
    Array.from({ length: Math.ceil(plainCount / BATCH) }, (_, b) =>
      h.qstash.batchJSON(
        Array.from({ length: Math.min(BATCH, plainCount - b * BATCH) }, (_, i) => ({
          url: `${h.receiver.url}/plain`,
          body: { ...BODY, i },
        })),
      ),
    ),
  );
  await waitFor(
    `${plainCount} plain deliveries`,
    async () => (h.receiver.arrivals.length - arrivedBefore >= plainCount ? true : undefined),
    { timeoutMs: 600_000, intervalMs: 20 },
  );
  const plainMs = h.receiver.arrivals.at(-1)!.at - plainStarted;
  return {
    runsPerSecond: (runIds.length / elapsedMs) * 1_000,
    stepsPerSecond: (steps / elapsedMs) * 1_000,
    p99RunMs: quantile(runTimes, 0.99),
    memoryPerRun,
    runKeysPerRun: keyBytes.reduce((a, b) => a + b, 0) / sample.length,
    eventsPerRun,
    cpuPerStepUs: (cpu * 1e6) / steps,
    sdkCpuPerStepUs: (sdkCpu * 1e6) / steps,
    plainPerSecond: (plainCount / plainMs) * 1_000,
    cpuPerPlainUs: ((cpuSeconds(h.gateway.proc.pid) - plainCpu) * 1e6) / plainCount,
  };
}

/** Notify-to-resume latencies (ms) of WAITERS runs, each waiting on its own event. */
async function notifyRound(h: Harness): Promise<number[]> {
  const k = queueKeys(KEY_PREFIX);
  const url = h.endpoints.expressUrl('waiter');
  const runIds: string[] = [];
  for (let b = 0; b < WAITERS; b += BATCH) {
    const items = Array.from({ length: Math.min(BATCH, WAITERS - b) }, (_, i) => ({
      url,
      body: { key: b + i },
    }));
    runIds.push(...(await h.workflows.trigger(items)).map((r) => r.workflowRunId));
  }
  await waitFor(
    `${WAITERS} runs waiting`,
    async () => {
      const pipeline = h.inspect.pipeline();
      for (let i = 0; i < WAITERS; i++) pipeline.exists(k.workflowWaiters(`evt-${i}`));
      const replies = (await pipeline.exec()) ?? [];
      return replies.every(([, n]) => n === 1) ? true : undefined;
    },
    { timeoutMs: 600_000, intervalMs: 200 },
  );
  const sentAt = new Map<string, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: NOTIFY_IN_FLIGHT }, async () => {
      while (next < WAITERS) {
        const eventId = `evt-${next++}`;
        sentAt.set(eventId, now());
        await h.workflows.notify({ eventId, eventData: { ok: true } });
      }
    }),
  );
  await finished(h, runIds, 600_000);
  return [...sentAt].map(([eventId, at]) => resumedAt.get(eventId)! - at);
}

/** A summary line: the figure, its goal, and MISSED when it is not met. */
function goalLine(name: string, figure: string, goal: string, met?: boolean): void {
  const verdict = met === undefined ? '' : met ? 'met' : 'MISSED';
  console.log(`  ${name.padEnd(46)} ${figure.padEnd(44)} ${goal.padEnd(26)} ${verdict}`);
}

async function main(): Promise<void> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-workflow-bench-'));
  let redis: RedisServer | undefined;
  const h: Partial<Harness> = {};
  try {
    redis = await startRedis({ dataDir });
    const target = testQueueTarget(redis, { namespace: 'bench', name: 'wf' });
    const gateway = await spawnQueueGateway({
      targets: [target],
      env: buildQueueGatewayEnv(KEY_PREFIX, {
        SETTEE_QUEUE_WORKER_CONCURRENCY: '128',
        SETTEE_QUEUE_MAX_BATCH_SIZE: String(BATCH),
      }),
    });
    h.gateway = gateway;
    const queueUrl = `${gateway.baseUrl}/queue/bench/wf`;
    h.inspect = new Redis({ host: redis.host, port: redis.port, password: redis.password, protocol: 2 });
    h.receiver = await startArrivalReceiver();
    h.endpoints = await startWorkflowEndpoints({
      target,
      queueUrl,
      workflows: { sequential: { route: sequential }, fanout: { route: fanOut }, waiter: { route: waiter } },
    });
    h.workflows = new Client({ baseUrl: queueUrl, token: target.token });
    h.qstash = new QStashClient({ baseUrl: queueUrl, token: target.token, retry: false });
    h.runs = new WorkflowRunStore(h.inspect, queueKeys(KEY_PREFIX));
    const harness = h as Harness;
    const loadAtStart = os.loadavg()[0]!;
    console.log(
      `workflow benchmark: ${os.cpus().length} CPUs shared with other work, load average ${round(loadAtStart, 1)}; ` +
        `${ROUNDS} rounds of ${RUNS_PER_ROUND} ${STEPS}-step runs; ${FANOUT_ROUNDS} rounds of ${CONCURRENT} fan-out runs\n`,
    );

    // A warm-up round, not counted: connections opened, scripts loaded, code compiled.
    await sequentialRound(harness);

    const seq: SequentialRound[] = [];
    for (let i = 0; i < ROUNDS; i++) seq.push(await sequentialRound(harness));
    console.log(`1. ${STEPS}-step sequential workflow against ${STEPS} plain round trips, alternating:`);
    const perRound = seq.map((r) => ({
      stepP50: quantile(r.stepMs, 0.5),
      stepP99: quantile(r.stepMs, 0.99),
      tripP50: quantile(r.roundTripMs, 0.5),
      tripP99: quantile(r.roundTripMs, 0.99),
      run: median(r.runMs),
      chain: median(r.chainMs),
    }));
    for (const [i, r] of perRound.entries())
      console.log(
        `  round ${i + 1}: step p50 ${round(r.stepP50, 2)} ms, p99 ${round(r.stepP99, 2)} ms; round trip p50 ${round(r.tripP50, 2)} ms, p99 ${round(r.tripP99, 2)} ms; run ${round(r.run, 1)} ms, ${STEPS} round trips ${round(r.chain, 1)} ms`,
      );

    const fan: ConcurrentRound[] = [];
    for (let i = 0; i < FANOUT_ROUNDS; i++) fan.push(await concurrentRound(harness));
    console.log(
      `\n2. ${CONCURRENT} runs at once of a 5-step workflow with a fan-out of ${FANOUT} (${FANOUT_STEPS} step functions a run), then as many plain messages:`,
    );
    for (const [i, r] of fan.entries())
      console.log(
        `  round ${i + 1}: ${round(r.runsPerSecond, 1)} runs/s, ${Math.round(r.stepsPerSecond)} steps/s, p99 run ${Math.round(r.p99RunMs)} ms, ` +
          `Redis +${Math.round(r.memoryPerRun)} B per run (its keys ${Math.round(r.runKeysPerRun)} B, events +${Math.round(r.eventsPerRun)} B), gateway CPU ${Math.round(r.cpuPerStepUs)} µs/step, SDK side ${Math.round(r.sdkCpuPerStepUs)} µs/step; ` +
          `plain ${Math.round(r.plainPerSecond)} msgs/s, ${Math.round(r.cpuPerPlainUs)} µs/msg`,
      );

    const notified = WAITERS > 0 ? await notifyRound(harness) : [];
    if (WAITERS > 0)
      console.log(
        `\n3. ${WAITERS} runs waiting on an event each, notified ${NOTIFY_IN_FLIGHT} at a time: notify to resume p50 ${round(quantile(notified, 0.5), 2)} ms, p99 ${round(quantile(notified, 0.99), 2)} ms`,
      );

    const of = <T>(rows: T[], pick: (row: T) => number): number[] => rows.map(pick);
    const p50Ratios = of(perRound, (r) => r.stepP50 / r.tripP50);
    const p99Ratios = of(perRound, (r) => r.stepP99 / r.tripP99);
    const runRatios = of(perRound, (r) => r.run / r.chain);
    console.log(
      `\nagainst the goals (load average ${round(loadAtStart, 1)} at the start, ${round(os.loadavg()[0]!, 1)} now, on a shared machine; medians of the rounds, their spread in brackets):`,
    );
    goalLine(
      'step / plain round trip, p50',
      `${round(median(p50Ratios), 2)}x ${spread(p50Ratios, 2)} (${round(median(of(perRound, (r) => r.stepP50)), 2)} / ${round(median(of(perRound, (r) => r.tripP50)), 2)} ms)`,
      `≤ ${STEP_TO_ROUND_TRIP_GOAL}x`,
      median(p50Ratios) <= STEP_TO_ROUND_TRIP_GOAL,
    );
    goalLine(
      'step / plain round trip, p99',
      `${round(median(p99Ratios), 2)}x ${spread(p99Ratios, 2)} (${round(median(of(perRound, (r) => r.stepP99)), 2)} / ${round(median(of(perRound, (r) => r.tripP99)), 2)} ms)`,
      `≤ ${STEP_TO_ROUND_TRIP_GOAL}x`,
      median(p99Ratios) <= STEP_TO_ROUND_TRIP_GOAL,
    );
    goalLine(
      `run end to end / ${STEPS} round trips`,
      `${round(median(runRatios), 2)}x ${spread(runRatios, 2)} (${Math.round(median(of(perRound, (r) => r.run)))} / ${Math.round(median(of(perRound, (r) => r.chain)))} ms)`,
      `≤ ${STEP_TO_ROUND_TRIP_GOAL}x (per step)`,
      median(runRatios) <= STEP_TO_ROUND_TRIP_GOAL,
    );
    const noGoal = 'no goal in issue 28';
    goalLine(
      `runs/s, ${CONCURRENT} at once`,
      `${round(median(of(fan, (r) => r.runsPerSecond)), 1)} ${spread(of(fan, (r) => r.runsPerSecond))}`,
      noGoal,
    );
    const stepsRatio = of(fan, (r) => r.stepsPerSecond / r.plainPerSecond);
    goalLine(
      'steps/s (anchor: plain messages/s)',
      `${Math.round(median(of(fan, (r) => r.stepsPerSecond)))} ${spread(
        of(fan, (r) => r.stepsPerSecond),
        0,
      )}, ${round(median(stepsRatio), 2)}x of ${Math.round(median(of(fan, (r) => r.plainPerSecond)))}`,
      noGoal,
    );
    goalLine(
      'p99 run time',
      `${Math.round(median(of(fan, (r) => r.p99RunMs)))} ms ${spread(
        of(fan, (r) => r.p99RunMs),
        0,
      )}`,
      noGoal,
    );
    goalLine(
      'Redis memory per finished run',
      `${Math.round(median(of(fan, (r) => r.memoryPerRun)))} B ${spread(
        of(fan, (r) => r.memoryPerRun),
        0,
      )}: its keys ${Math.round(median(of(fan, (r) => r.runKeysPerRun)))} B, events ${Math.round(median(of(fan, (r) => r.eventsPerRun)))} B`,
      noGoal,
    );
    const cpuRatio = of(fan, (r) => r.cpuPerStepUs / r.cpuPerPlainUs);
    goalLine(
      'gateway CPU per step (anchor: per plain msg)',
      `${Math.round(median(of(fan, (r) => r.cpuPerStepUs)))} µs ${spread(
        of(fan, (r) => r.cpuPerStepUs),
        0,
      )}, ${round(median(cpuRatio), 2)}x of ${Math.round(median(of(fan, (r) => r.cpuPerPlainUs)))} µs`,
      noGoal,
    );
    if (WAITERS > 0) {
      const tripP50 = median(of(perRound, (r) => r.tripP50));
      const tripP99 = median(of(perRound, (r) => r.tripP99));
      goalLine(
        `notify to resume, ${WAITERS} waiting, p50 / p99`,
        `${round(quantile(notified, 0.5), 1)} / ${round(quantile(notified, 0.99), 1)} ms (${round(quantile(notified, 0.5) / tripP50, 2)}x / ${round(quantile(notified, 0.99) / tripP99, 2)}x of a round trip)`,
        noGoal,
      );
    }
  } finally {
    await h.endpoints?.close();
    await h.gateway?.proc.stop();
    h.inspect?.disconnect();
    await h.receiver?.close();
    await redis?.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

await main();
