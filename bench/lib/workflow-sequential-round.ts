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
import { WORKFLOW_RUN_ID_HEADER } from '../../gateway/queue/core/workflow-message.js';
import { alternateRounds } from './alternating-rounds.js';
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
}

type RunTimes = Pick<SequentialRound, 'stepMs' | 'queueMs' | 'sdkMs' | 'runMs'>;
type ChainTimes = Pick<SequentialRound, 'roundTripMs' | 'chainMs'>;

async function oneRun(h: WorkflowHarness): Promise<RunTimes> {
  const started = now();
  const { workflowRunId } = await h.workflows.trigger({
    url: h.endpoints.expressUrl('sequential'),
    body: BODY,
  });
  const [run] = await finishedRuns(h, [workflowRunId], 30_000);
  const times = stepTimes.get(workflowRunId)!;
  const arrived = arrivals.get(workflowRunId) ?? [];
  const result: RunTimes = { stepMs: [], queueMs: [], sdkMs: [], runMs: [run!.finishedAt! - started] };
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
  const result: ChainTimes = { roundTripMs: [], chainMs: [] };
  const chainStarted = now();
  for (let i = 0; i < SEQUENTIAL_STEPS; i++) {
    const sent = now();
    const arrived = h.receiver.next();
    await h.qstash.publishJSON({ url: `${h.receiver.url}/plain`, body: { ...BODY, i } });
    result.roundTripMs.push((await arrived) - sent);
  }
  result.chainMs.push(now() - chainStarted);
  return result;
}

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
  };
}
