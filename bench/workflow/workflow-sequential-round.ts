/**
 * Part 1 of bench/workflow.ts: a 10-step sequential workflow against 10 plain publish-and-deliver
 * round trips (the @upstash/qstash Client's publish to a receiver on loopback, one at a time),
 * one run and one chain of round trips in turn. A step's time (the trigger or the last step's
 * function to this step's function) is split where its delivery reaches the endpoint: the queue's
 * part (the SDK's publish of the last step, the gateway, the delivery: what a round trip measures
 * too) and the SDK's part (its handler: signature check, parse of the steps so far, replay of the
 * workflow up to this step).
 */
import type http from 'node:http';
import type { WorkflowContext } from '@upstash/workflow';
import { waitFor } from '../../local/wait.js';
import { WORKFLOW_RUN_ID_HEADER } from '../../gateway/queue/core/workflow-message.js';
import { alternateRounds } from '../lib/alternating-rounds.js';
import { cpuSeconds } from '../lib/process-usage.js';
import { finishedRuns, now, type WorkflowHarness } from './workflow-bench-harness.js';

export const SEQUENTIAL_STEPS = 10;
const BODY = { event: 'order.created', id: 12345, amount: 42.5, currency: 'EUR' };

/** When each step function of a run first ran (epoch ms, sub-ms), by run id. */
const stepTimes = new Map<string, number[]>();
/** When each delivery of a run reached its endpoint (epoch ms, sub-ms), by run id. */
const arrivals = new Map<string, number[]>();

export async function sequentialWorkflow(context: WorkflowContext<unknown>): Promise<number> {
  let last = 0;
  for (let i = 0; i < SEQUENTIAL_STEPS; i++)
    last = await context.run(`step-${i}`, () => {
      const times = stepTimes.get(context.workflowRunId) ?? [];
      times[i] ??= now();
      stepTimes.set(context.workflowRunId, times);
      return i;
    });
  return last;
}

/** The harness's onArrival: each delivery of a run, by its run id. */
export function recordArrival(req: http.IncomingMessage, at: number): void {
  const runId = req.headers[WORKFLOW_RUN_ID_HEADER.toLowerCase()];
  if (typeof runId !== 'string') return;
  const times = arrivals.get(runId) ?? [];
  times.push(at);
  arrivals.set(runId, times);
}

export interface SequentialRound {
  /** Each step's time, its queue part and its SDK part, and each plain round trip's time, ms. */
  stepMs: number[];
  queueMs: number[];
  sdkMs: number[];
  roundTripMs: number[];
  /** Trigger to the gateway's finish of each run, and 10 round trips one after another, ms. */
  runMs: number[];
  chainMs: number[];
  /**
   * CPU time of the runs and of the chains, µs: the gateway's, and this process's (the SDK's
   * serve() and clients for a run; the QStash client and the receiver for a chain).
   */
  runCpuUs: ProcessCpu;
  chainCpuUs: ProcessCpu;
}

export interface ProcessCpu {
  gateway: number;
  endpoint: number;
}

type RunTimes = Pick<SequentialRound, 'stepMs' | 'queueMs' | 'sdkMs' | 'runMs'> & { cpuUs: ProcessCpu };
type ChainTimes = Pick<SequentialRound, 'roundTripMs' | 'chainMs'> & { cpuUs: ProcessCpu };

/** The CPU `h`'s gateway and this process spend from now until the returned function is called, µs. */
function cpuFrom(h: WorkflowHarness): () => ProcessCpu {
  const [gateway, endpoint] = [cpuSeconds(h.gateway.proc.pid), process.cpuUsage()];
  return () => {
    const used = process.cpuUsage(endpoint);
    return { gateway: (cpuSeconds(h.gateway.proc.pid) - gateway) * 1e6, endpoint: used.user + used.system };
  };
}

async function oneRun(h: WorkflowHarness): Promise<RunTimes> {
  const cpu = cpuFrom(h);
  const started = now();
  const { workflowRunId } = await h.workflows.trigger({
    url: h.endpoints.expressUrl('sequential'),
    body: BODY,
  });
  // Its last step seen in this process first: Redis is read only for the run's end, so the
  // bench's own reads stay off the steps it measures.
  await waitFor(
    'the last step',
    async () => (stepTimes.get(workflowRunId)?.[SEQUENTIAL_STEPS - 1] === undefined ? undefined : true),
    { timeoutMs: 30_000, intervalMs: 1 },
  );
  const [run] = await finishedRuns(h, [workflowRunId], 30_000);
  const cpuUs = cpu();
  const times = stepTimes.get(workflowRunId)!;
  const arrived = arrivals.get(workflowRunId) ?? [];
  const result: RunTimes = {
    stepMs: [],
    queueMs: [],
    sdkMs: [],
    runMs: [run!.finishedAt! - started],
    cpuUs,
  };
  for (const [i, at] of times.entries()) {
    const from = i === 0 ? started : times[i - 1]!;
    // The delivery that ran the step: the last to arrive before it (a retried one arrives again).
    const delivered = arrived.filter((t) => t <= at).at(-1) ?? from;
    result.stepMs.push(at - from);
    result.queueMs.push(delivered - from);
    result.sdkMs.push(at - delivered);
  }
  return result;
}

async function oneChain(h: WorkflowHarness): Promise<ChainTimes> {
  const roundTripMs: number[] = [];
  const cpu = cpuFrom(h);
  const chainStarted = now();
  for (let i = 0; i < SEQUENTIAL_STEPS; i++) {
    const sent = now();
    const arrived = h.receiver.next();
    await h.qstash.publishJSON({ url: `${h.receiver.url}/plain`, body: { ...BODY, i } });
    roundTripMs.push((await arrived) - sent);
  }
  return { roundTripMs, chainMs: [now() - chainStarted], cpuUs: cpu() };
}

const sum = (all: ProcessCpu[]): ProcessCpu => ({
  gateway: all.reduce((total, c) => total + c.gateway, 0),
  endpoint: all.reduce((total, c) => total + c.endpoint, 0),
});

/** `runs` runs and as many chains of round trips, alternating. */
export async function sequentialRound(h: WorkflowHarness, runs: number): Promise<SequentialRound> {
  const [runSides, chainSides] = (await alternateRounds<RunTimes | ChainTimes>(runs, [
    () => oneRun(h),
    () => oneChain(h),
  ])) as [RunTimes[], ChainTimes[]];
  return {
    stepMs: runSides.flatMap((r) => r.stepMs),
    queueMs: runSides.flatMap((r) => r.queueMs),
    sdkMs: runSides.flatMap((r) => r.sdkMs),
    runMs: runSides.flatMap((r) => r.runMs),
    roundTripMs: chainSides.flatMap((c) => c.roundTripMs),
    chainMs: chainSides.flatMap((c) => c.chainMs),
    runCpuUs: sum(runSides.map((r) => r.cpuUs)),
    chainCpuUs: sum(chainSides.map((c) => c.cpuUs)),
  };
}
