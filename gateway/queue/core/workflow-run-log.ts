import type { WorkflowWaiter } from './workflow-event.js';
import type { RawStep, WorkflowRunRecord } from './workflow-message.js';

/**
 * A run as client.logs() reports it (the SDK's WorkflowRunLog, src/client/types.ts): its state,
 * times, result and its steps in groups, each step with its name, type, output and time, and, for
 * a run waiting for events, a last `next` group of its waits in progress. Pure: the run, its raw
 * steps and its waiters in, the answer out.
 */

export interface StepLog {
  stepId: number;
  stepName: string;
  stepType: string;
  callType: 'step';
  messageId: string;
  out: unknown;
  concurrent: number;
  state: 'STEP_SUCCESS';
  createdAt: number;
  retries: number;
  headers: Record<string, string[]>;
  sleepFor?: unknown;
  sleepUntil?: unknown;
}

export interface StepLogGroup {
  type: 'sequential' | 'parallel';
  steps: StepLog[];
}

/**
 * A wait in progress, as QStash's logs give the step of a `next` group (its StepInfo: the SDK's
 * WaitEventGroup fields). The deadline is epoch ms, as every time of the logs; the duration is
 * the wait's whole timeout (`<seconds>s`) when its start is known.
 */
export interface WaitStepLog {
  stepId: number;
  stepName: string;
  stepType: string;
  callType: 'step';
  /** The wait's timer message: what delivers its timeout. */
  messageId: string;
  concurrent: number;
  state: 'STEP_PROGRESS';
  createdAt?: number;
  waitEventId: string;
  waitTimeoutDeadline: number;
  waitTimeoutDuration?: string;
  waitTimeout: false;
}

export interface WorkflowRunLog {
  workflowRunId: string;
  workflowUrl: string;
  workflowState: WorkflowRunRecord['state'];
  workflowRunCreatedAt: number;
  workflowRunCompletedAt?: number;
  workflowRunResponse?: string;
  label?: string;
  dlqId?: string;
  steps: (StepLogGroup | { type: 'next'; steps: WaitStepLog[] })[];
}

/** A step's JSON as the SDK publishes it (context/steps.ts getResultStep). */
interface PublishedStep {
  stepId?: number;
  stepName?: string;
  stepType?: string;
  out?: unknown;
  concurrent?: number;
  sleepFor?: unknown;
  sleepUntil?: unknown;
}

function parsedOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function publishedStep(raw: RawStep): PublishedStep | undefined {
  const parsed = parsedOrText(Buffer.from(raw.body, 'base64').toString('utf8'));
  return typeof parsed === 'object' && parsed !== null ? (parsed as PublishedStep) : undefined;
}

function waitStepLog(waiter: WorkflowWaiter): WaitStepLog {
  const log: WaitStepLog = {
    stepId: waiter.step.stepId,
    stepName: waiter.step.stepName,
    stepType: waiter.step.stepType,
    callType: 'step',
    messageId: waiter.timerId,
    concurrent: waiter.step.concurrent,
    state: 'STEP_PROGRESS',
    waitEventId: waiter.eventId,
    waitTimeoutDeadline: waiter.deadline,
    waitTimeout: false,
  };
  if (waiter.since !== undefined) {
    log.createdAt = waiter.since;
    log.waitTimeoutDuration = `${Math.round((waiter.deadline - waiter.since) / 1000)}s`;
  }
  return log;
}

/** `waiters`: the run's own waiters in progress (WorkflowEventStore.waitersOfRun), none when it waits for nothing. */
export function buildWorkflowRunLog(
  run: WorkflowRunRecord,
  rawSteps: readonly RawStep[],
  waiters: readonly WorkflowWaiter[] = [],
): WorkflowRunLog {
  const headers = Object.fromEntries(
    Object.entries(run.config.headers).map(([name, value]) => [name, [value]]),
  );
  const stepLog = (raw: RawStep, step: PublishedStep): StepLog => {
    const log: StepLog = {
      stepId: step.stepId ?? 0,
      stepName: step.stepName ?? '',
      stepType: step.stepType ?? '',
      callType: 'step',
      messageId: raw.messageId,
      out: typeof step.out === 'string' ? parsedOrText(step.out) : step.out,
      concurrent: step.concurrent ?? 1,
      state: 'STEP_SUCCESS',
      createdAt: raw.createdAt,
      retries: run.config.retries,
      headers,
    };
    if (step.sleepFor !== undefined) log.sleepFor = step.sleepFor;
    if (step.sleepUntil !== undefined) log.sleepUntil = step.sleepUntil;
    return log;
  };
  const groups: StepLogGroup[] = [];
  const [initial, ...rest] = rawSteps;
  if (initial)
    groups.push({
      type: 'sequential',
      steps: [
        stepLog(initial, {
          stepId: 0,
          stepName: 'init',
          stepType: 'Initial',
          out: Buffer.from(initial.body, 'base64').toString('utf8'),
        }),
      ],
    });
  let parallel: StepLogGroup | undefined;
  for (const raw of rest) {
    const step = publishedStep(raw);
    // A parallel step's plan (stepId 0) says which step runs next, not a result.
    if (!step || step.stepId === undefined || step.stepId === 0) continue;
    const concurrent = step.concurrent ?? 1;
    if (concurrent === 1) {
      parallel = undefined;
      groups.push({ type: 'sequential', steps: [stepLog(raw, step)] });
      continue;
    }
    if (!parallel || parallel.steps.length >= concurrent) {
      parallel = { type: 'parallel', steps: [] };
      groups.push(parallel);
    }
    parallel.steps.push(stepLog(raw, step));
  }
  const log: WorkflowRunLog = {
    workflowRunId: run.runId,
    workflowUrl: run.config.url,
    workflowState: run.state,
    workflowRunCreatedAt: run.createdAt,
    steps: waiters.length === 0 ? groups : [...groups, { type: 'next', steps: waiters.map(waitStepLog) }],
  };
  if (run.finishedAt !== undefined) log.workflowRunCompletedAt = run.finishedAt;
  if (run.response !== undefined) log.workflowRunResponse = run.response;
  if (run.config.label !== undefined) log.label = run.config.label;
  if (run.failure !== undefined) {
    const { dlqId } = parsedOrText(run.failure) as { dlqId?: string };
    if (dlqId !== undefined) log.dlqId = dlqId;
  }
  return log;
}
