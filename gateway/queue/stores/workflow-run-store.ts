import type { Redis } from 'ioredis';
import type { QueueKeys } from '../core/keys.js';
import { appendWorkflowStep } from '../scripts/append-workflow-step.js';
import { finishWorkflowRun } from '../scripts/finish-workflow-run.js';
import { startWorkflowRun } from '../scripts/start-workflow-run.js';
import type { RawStep, WorkflowRunConfig } from '../core/workflow-message.js';

/**
 * The largest delivery body that carries a run's steps; past it the body is empty and the SDK
 * fetches them (LazyFetch). Each message of a run holds the steps before it, so inlining the whole
 * list makes a run's messages grow with the square of its length: 64 KiB keeps short runs to one
 * round trip per step while a long or large one costs one read per step instead.
 */
export const WORKFLOW_INLINE_STEPS_BYTES = 64 * 1024;

export type WorkflowRunState = 'RUN_STARTED' | 'RUN_SUCCESS' | 'RUN_FAILED' | 'RUN_CANCELED';

/** One run as stored (keys.ts workflowRun). */
export interface WorkflowRunRecord {
  runId: string;
  config: WorkflowRunConfig;
  state: WorkflowRunState;
  createdAt: number;
  finishedAt?: number;
  /** What the run returned (the SDK's DELETE body), as sent. */
  response?: string;
  /** The failed step's last answer or error, for a RUN_FAILED run. */
  failure?: string;
}

export type StartOutcome = { started: true; body: Buffer } | { started: false; firstMessageId: string };
export type AppendOutcome = { appended: true; body: Buffer } | { appended: false; state: string };

/** A binding's workflow runs and their steps (key layout in keys.ts); each change one script. */
export class WorkflowRunStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: QueueKeys,
  ) {}

  async start(input: {
    runId: string;
    config: WorkflowRunConfig;
    createdAt: number;
    firstStep: RawStep;
  }): Promise<StartOutcome> {
    const { runId, config, createdAt, firstStep } = input;
    const k = this.keys;
    const [started, value] = (await startWorkflowRun.run(
      this.redis,
      [k.workflowRun(runId), k.workflowSteps(runId), k.workflowRunOrder],
      [
        runId,
        JSON.stringify(config),
        createdAt,
        JSON.stringify(firstStep),
        firstStep.messageId,
        WORKFLOW_INLINE_STEPS_BYTES,
      ],
    )) as [number, string];
    return started === 1
      ? { started: true, body: Buffer.from(value, 'utf8') }
      : { started: false, firstMessageId: value };
  }

  async append(runId: string, step: RawStep): Promise<AppendOutcome> {
    const k = this.keys;
    const [appended, value] = (await appendWorkflowStep.run(
      this.redis,
      [k.workflowRun(runId), k.workflowSteps(runId)],
      [JSON.stringify(step), WORKFLOW_INLINE_STEPS_BYTES],
    )) as [number, string];
    return appended === 1
      ? { appended: true, body: Buffer.from(value, 'utf8') }
      : { appended: false, state: value };
  }

  /** Ends a running run; false when it was not running. */
  async finish(
    runId: string,
    end: { state: Exclude<WorkflowRunState, 'RUN_STARTED'>; at: number; response?: string; failure?: string },
  ): Promise<boolean> {
    const [field, value] =
      end.response !== undefined
        ? ['response', end.response]
        : end.failure !== undefined
          ? ['failure', end.failure]
          : ['', ''];
    const ended = await finishWorkflowRun.run(
      this.redis,
      [this.keys.workflowRun(runId)],
      [end.state, end.at, field, value],
    );
    return ended === 1;
  }

  async get(runId: string): Promise<WorkflowRunRecord | undefined> {
    const fields = await this.redis.hgetall(this.keys.workflowRun(runId));
    if (fields.config === undefined || fields.state === undefined) return undefined;
    const record: WorkflowRunRecord = {
      runId,
      config: JSON.parse(fields.config) as WorkflowRunConfig,
      state: fields.state as WorkflowRunState,
      createdAt: Number(fields.createdAt),
    };
    if (fields.finishedAt !== undefined) record.finishedAt = Number(fields.finishedAt);
    if (fields.response !== undefined) record.response = fields.response;
    if (fields.failure !== undefined) record.failure = fields.failure;
    return record;
  }

  /** The run's initial payload, base64, as its first step holds it. */
  async initialBody(runId: string): Promise<string> {
    const first = await this.redis.lindex(this.keys.workflowSteps(runId), 0);
    return first === null ? '' : (JSON.parse(first) as RawStep).body;
  }

  /** The run's steps in publish order, the initial payload first. */
  async steps(runId: string): Promise<RawStep[]> {
    const all = await this.redis.lrange(this.keys.workflowSteps(runId), 0, -1);
    return all.map((step) => JSON.parse(step) as RawStep);
  }
}
