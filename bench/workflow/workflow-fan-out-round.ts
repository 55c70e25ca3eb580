/**
 * Part 2 of bench/workflow.ts: N runs at once of a 5-step workflow whose second step is a
 * parallel fan-out of 10, against as many plain messages as those runs record steps, published
 * in batches and delivered to a receiver: runs/s, steps/s, p99 run time, Redis memory per
 * finished run, gateway CPU per step (per plain message for the anchor).
 */
import type { WorkflowContext } from '@upstash/workflow';
import type { Redis } from 'ioredis';
import { waitFor } from '../../local/wait.js';
import { DELIVERY_GROUP } from '../../gateway/queue/core/keys.js';
import { callsBetween } from '../../test/helpers/calls-between.js';
import { commandCalls, cpuSeconds } from '../lib/process-usage.js';
import { quantile } from '../lib/stats.js';
import { finishedRuns, now, type WorkflowHarness } from './workflow-bench-harness.js';

export const FANOUT = 10;
/** The fan-out workflow's step functions: prepare, the 10 parts, combine, save, report. */
export const FANOUT_STEPS = 4 + FANOUT;
const BODY = { event: 'order.created', id: 12345, amount: 42.5, currency: 'EUR' };

export async function fanOutWorkflow(context: WorkflowContext<unknown>): Promise<number> {
  const base = await context.run('prepare', () => 1);
  const parts = await Promise.all(
    Array.from({ length: FANOUT }, (_, i) => context.run(`part-${i}`, () => base + i)),
  );
  const sum = await context.run('combine', () => parts.reduce((a, b) => a + b, 0));
  await context.run('save', () => ({ saved: sum }));
  return context.run('report', () => sum * 2);
}

export interface ConcurrentRound {
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
  /**
   * Redis commands per step (INFO commandstats: a script's run and each command it runs) and
   * script runs per step, the gateway's alone; the same per plain message.
   */
  commandsPerStep: number;
  scriptsPerStep: number;
  redisBytesInPerStep: number;
  /** The anchor: as many plain messages as the runs recorded steps, published in batches. */
  plainPerSecond: number;
  cpuPerPlainUs: number;
  commandsPerPlain: number;
  scriptsPerPlain: number;
  redisBytesInPerPlain: number;
}

interface CommandCounts {
  all: number;
  scripts: number;
  /** Bytes Redis read from its clients (INFO stats total_net_input_bytes; the bench's few reads in). */
  bytesIn: number;
}

async function netInputBytes(inspect: Redis): Promise<number> {
  return Number(/total_net_input_bytes:(\d+)/.exec(await inspect.info('stats'))?.[1]);
}

/**
 * The gateway's Redis commands from now until the returned function is called, once its
 * deliveries are all acknowledged (a run's end and a receiver's arrival come before the last
 * completion): everything INFO commandstats counted, less the bench's own (sent on `inspect`) and
 * this first reading's INFO.
 */
async function commandsFrom(h: WorkflowHarness): Promise<() => Promise<CommandCounts>> {
  const bytesBefore = await netInputBytes(h.inspect);
  const before = await commandCalls(h.inspect);
  const sentBefore = h.inspectCommands.sent;
  return async () => {
    await waitFor(
      'every delivery acknowledged',
      async () => ((await h.inspect.xpending(h.keys.stream, DELIVERY_GROUP))[0] === 0 ? true : undefined),
      { timeoutMs: 60_000, intervalMs: 20 },
    );
    const own = h.inspectCommands.sent - sentBefore;
    const calls = callsBetween(before, await commandCalls(h.inspect), /^$/);
    const bytesIn = (await netInputBytes(h.inspect)) - bytesBefore;
    const all = [...calls.values()].reduce((a, b) => a + b, 0) - own - 1;
    return { all, scripts: (calls.get('evalsha') ?? 0) + (calls.get('eval') ?? 0), bytesIn };
  };
}

async function usedMemory(inspect: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await inspect.info('memory'))?.[1]);
}

/** `concurrent` fan-out runs triggered in batches of `batch`, then as many plain messages. */
export async function concurrentRound(
  h: WorkflowHarness,
  options: { concurrent: number; batch: number },
): Promise<ConcurrentRound> {
  const { concurrent, batch } = options;
  const k = h.keys;
  // SAMPLES 0: every entry of the stream counted, not an estimate from a few.
  const eventBytes = async () => Number(await h.inspect.memory('USAGE', k.events, 'SAMPLES', 0));
  const [memoryBefore, eventsBefore] = [await usedMemory(h.inspect), await eventBytes()];
  const runCommands = await commandsFrom(h);
  const [cpuBefore, sdkCpuBefore, started] = [cpuSeconds(h.gateway.proc.pid), cpuSeconds(process.pid), now()];
  const url = h.endpoints.expressUrl('fanout');
  const triggered = await Promise.all(
    Array.from({ length: Math.ceil(concurrent / batch) }, async (_, b) => {
      const count = Math.min(batch, concurrent - b * batch);
      const sent = now();
      const ids = await h.workflows.trigger(Array.from({ length: count }, () => ({ url, body: BODY })));
      return ids.map(({ workflowRunId }) => ({ workflowRunId, sent }));
    }),
  );
  const runIds = triggered.flat();
  const records = await finishedRuns(
    h,
    runIds.map((r) => r.workflowRunId),
    600_000,
  );
  const elapsedMs = Math.max(...records.map((r) => r.finishedAt!)) - started;
  const cpu = cpuSeconds(h.gateway.proc.pid) - cpuBefore;
  const sdkCpu = cpuSeconds(process.pid) - sdkCpuBefore;
  const stepCommands = await runCommands();
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
  const plainCommands = await commandsFrom(h);
  const [plainCpu, plainStarted] = [cpuSeconds(h.gateway.proc.pid), now()];
  await Promise.all(
    Array.from({ length: Math.ceil(plainCount / batch) }, (_, b) =>
      h.qstash.batchJSON(
        Array.from({ length: Math.min(batch, plainCount - b * batch) }, (_, i) => ({
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
  const cpuPerPlainUs = ((cpuSeconds(h.gateway.proc.pid) - plainCpu) * 1e6) / plainCount;
  const plain = await plainCommands();
  return {
    runsPerSecond: (runIds.length / elapsedMs) * 1_000,
    stepsPerSecond: (steps / elapsedMs) * 1_000,
    p99RunMs: quantile(runTimes, 0.99),
    memoryPerRun,
    runKeysPerRun: keyBytes.reduce((a, b) => a + b, 0) / sample.length,
    eventsPerRun,
    cpuPerStepUs: (cpu * 1e6) / steps,
    sdkCpuPerStepUs: (sdkCpu * 1e6) / steps,
    commandsPerStep: stepCommands.all / steps,
    scriptsPerStep: stepCommands.scripts / steps,
    redisBytesInPerStep: stepCommands.bytesIn / steps,
    plainPerSecond: (plainCount / plainMs) * 1_000,
    cpuPerPlainUs,
    commandsPerPlain: plain.all / plainCount,
    scriptsPerPlain: plain.scripts / plainCount,
    redisBytesInPerPlain: plain.bytesIn / plainCount,
  };
}
