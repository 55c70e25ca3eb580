import type { Redis } from 'ioredis';
import { InvalidRequestError, QuotaExceededError } from '../core/errors.js';
import { MESSAGE_FIELD, type QueueKeys } from '../core/keys.js';
import { RUN_WAIT_FIELD_PREFIX } from '../core/workflow-event.js';
import { appendWorkflowStep } from '../scripts/append-workflow-step.js';
import { dropWorkflowRuns } from '../scripts/drop-workflow-runs.js';
import { finishWorkflowRun } from '../scripts/finish-workflow-run.js';
import { setWorkflowCallbackState } from '../scripts/set-workflow-callback-state.js';
import { startWorkflowRun } from '../scripts/start-workflow-run.js';
import {
  stepIdentity,
  type FailureCallbackState,
  type RawStep,
  type WorkflowRunConfig,
  type WorkflowRunRecord,
  type WorkflowRunState,
} from '../core/workflow-message.js';
import { configShaOf, knownWorkflowRuns, type KnownWorkflowRun } from './known-workflow-runs.js';

/**
 * The largest delivery body that carries a run's steps; past it the body is empty and the SDK
 * fetches them (LazyFetch). Each message of a run holds the steps before it, so inlining the whole
 * list makes a run's messages grow with the square of its length: 64 KiB keeps short runs to one
 * round trip per step while a long or large one costs one read per step instead.
 */
export const WORKFLOW_INLINE_STEPS_BYTES = 64 * 1024;

/** How many runs one step of a page reads. */
const PAGE_CHUNK = 100;
/** Finished runs one trim call drops at most per pass, and its passes: bounded work per maintenance pass. */
const TRIM_STEP = 500;
const TRIM_PASSES = 4;

function recordOf(runId: string, fields: Record<string, string>): WorkflowRunRecord | undefined {
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
  if (fields.callbackState !== undefined)
    record.callback = {
      state: fields.callbackState as FailureCallbackState,
      ...(fields.callbackDlqId !== undefined && { dlqId: fields.callbackDlqId }),
      ...(fields.callbackMessageId !== undefined && { messageId: fields.callbackMessageId }),
    };
  const waits = Object.entries(fields)
    .filter(([name]) => name.startsWith(RUN_WAIT_FIELD_PREFIX))
    .map(([name, eventId]) => ({ timerId: name.slice(RUN_WAIT_FIELD_PREFIX.length), eventId }));
  if (waits.length > 0) record.waits = waits;
  return record;
}

/** `<createdAt>:<runId>` as the score to read from and the id to start at; none: the newest. */
function parseCursor(cursor: string | undefined): [string, string | undefined] {
  if (cursor === undefined) return ['+inf', undefined];
  const match = /^(\d{1,16}):(wfr_.+)$/.exec(cursor);
  if (!match)
    throw new InvalidRequestError(`cursor ${JSON.stringify(cursor)} is not one this route answered`);
  return [match[1]!, match[2]!];
}

/**
 * A binding's limits on one run (limits.maxWorkflowSteps, maxWorkflowContextBytes): the steps it
 * takes after its payload, and its context, the payload's and the steps' body bytes.
 */
export interface WorkflowRunLimits {
  maxSteps: number;
  maxContextBytes: number;
}

/** What a store that only reads runs is given: nothing is refused. */
const NO_RUN_LIMITS: WorkflowRunLimits = {
  maxSteps: Number.MAX_SAFE_INTEGER,
  maxContextBytes: Number.MAX_SAFE_INTEGER,
};

/**
 * The 412 a step past a run's limits gets: the SDK makes it a WorkflowNonRetryableError, so the
 * delivery that published it fails without retries and the run fails with this message.
 */
function overRunLimit(
  runId: string,
  limits: WorkflowRunLimits,
  over: { steps: number } | { context: number },
) {
  return new QuotaExceededError(
    'steps' in over
      ? `workflow run ${runId} has ${over.steps} steps, ${limits.maxSteps} at most (maxWorkflowSteps): ` +
          'split it with context.invoke'
      : `workflow run ${runId}'s context would pass ${limits.maxContextBytes} bytes (maxWorkflowContextBytes; ` +
          `${over.context} so far): split it with context.invoke`,
  );
}

export type StartOutcome = { started: true; body: Buffer } | { started: false; firstMessageId: string };
/**
 * Appended steps come back with what their deliveries need of the run: each one's body, the run's
 * creation time, its settings, and, for a run with a failure callback, its initial payload
 * (base64), so the publish reads nothing else.
 */
export type AppendOutcome =
  | { appended: true; bodies: Buffer[]; createdAt: number; config: WorkflowRunConfig; initialBody?: string }
  | { appended: true; stored: true }
  | { appended: false; state: string };

/**
 * The deliveries of appended steps, built from `run` (known-workflow-runs.ts), for the append's
 * script to store: each one's id, due time (0: now), encoded message up to its body (the steps
 * so far, which the script adds) and CREATED event ('' = none), under the binding's `eventCap`.
 */
export interface StepDeliveries {
  run: KnownWorkflowRun;
  eventCap: number;
  messages: readonly { id: string; due: number; head: Buffer; created: string }[];
}

/** The body (base64) of a stored step's JSON. */
const bodyOfStep = (stored: string): string => (JSON.parse(stored) as RawStep).body;

/** A binding's workflow runs and their steps (key layout in keys.ts); each change one script. */
export class WorkflowRunStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: QueueKeys,
    /** What start and append refuse past (none: a store that only reads). */
    private readonly limits: WorkflowRunLimits = NO_RUN_LIMITS,
  ) {}

  async start(input: {
    runId: string;
    config: WorkflowRunConfig;
    createdAt: number;
    firstStep: RawStep;
  }): Promise<StartOutcome> {
    const { runId, config, createdAt, firstStep } = input;
    // The payload is the run's first context.
    const payloadBytes = Buffer.byteLength(firstStep.body, 'base64');
    if (payloadBytes > this.limits.maxContextBytes) throw overRunLimit(runId, this.limits, { context: 0 });
    const k = this.keys;
    const configJson = JSON.stringify(config);
    const [started, value] = (await startWorkflowRun.run(
      this.redis,
      [k.workflowRun(runId), k.workflowSteps(runId), k.workflowRunOrder],
      [
        runId,
        configJson,
        createdAt,
        JSON.stringify(firstStep),
        firstStep.messageId,
        WORKFLOW_INLINE_STEPS_BYTES,
        payloadBytes,
      ],
    )) as [number, string];
    if (started !== 1) return { started: false, firstMessageId: value };
    this.remember(runId, { createdAt, config, initialBody: firstStep.body }, configJson);
    return { started: true, body: Buffer.from(value, 'utf8') };
  }

  /** The run's settings as this replica last started or appended to it, if it did. */
  known(runId: string): KnownWorkflowRun | undefined {
    return knownWorkflowRuns.get(this.redis, this.keys.workflowRun(runId));
  }

  private remember(
    runId: string,
    run: Omit<KnownWorkflowRun, 'configSha'>,
    configJson: string | Buffer,
  ): void {
    const known: KnownWorkflowRun = {
      createdAt: run.createdAt,
      config: run.config,
      configSha: configShaOf(configJson),
    };
    // The payload is kept only where a delivery carries it.
    if (run.config.failureCallback !== undefined) known.initialBody = run.initialBody ?? '';
    knownWorkflowRuns.remember(this.redis, this.keys.workflowRun(runId), known, configJson);
  }

  /**
   * Appends a run's steps published in one request (one step, or a parallel group's plan steps),
   * all or none: steps past the run's limits are a 412, none of them stored, checked in the same
   * script as the appends (a step of the run published at the same moment through another replica
   * cannot leave the group half stored). Steps the run already counted (a group published again by
   * a retried delivery) take no room. With `deliveries` (one per step, in order) built from the run
   * as it is, the same script stores them (`stored`); otherwise, or when the run is not the one
   * they were built from, it answers what the caller needs to build and store them.
   */
  async append(
    runId: string,
    steps: readonly RawStep[],
    deliveries?: StepDeliveries,
  ): Promise<AppendOutcome> {
    const k = this.keys;
    const args: (string | number | Buffer)[] = [
      WORKFLOW_INLINE_STEPS_BYTES,
      this.limits.maxSteps,
      this.limits.maxContextBytes,
      deliveries?.run.createdAt ?? '',
      deliveries?.run.configSha ?? '',
      MESSAGE_FIELD,
      deliveries?.eventCap ?? 0,
    ];
    steps.forEach((step, i) => {
      const delivery = deliveries?.messages[i];
      args.push(JSON.stringify(step), Buffer.byteLength(step.body, 'base64'), stepIdentity(step));
      if (delivery === undefined) args.push('', '', '', '');
      else args.push(delivery.id, delivery.due, delivery.head, delivery.created);
    });
    // As Buffers: the bodies go out as the deliveries' bytes without a round trip through a string.
    const [outcome, value, config, payload, ...bodies] = (await appendWorkflowStep.runForBuffers(
      this.redis,
      [
        k.workflowRun(runId),
        k.workflowSteps(runId),
        k.workflowStepIds(runId),
        k.stream,
        k.streamIndex,
        k.schedule,
        k.scheduledMessages,
        k.events,
      ],
      args,
    )) as [number, Buffer, Buffer?, Buffer?, ...Buffer[]];
    if (outcome === 4) return { appended: true, stored: true };
    if (outcome === 2) throw overRunLimit(runId, this.limits, { steps: Number(value.toString()) });
    if (outcome === 3) throw overRunLimit(runId, this.limits, { context: Number(value.toString()) });
    if (outcome !== 1) return { appended: false, state: value.toString() };
    const appended: AppendOutcome = {
      appended: true,
      bodies,
      createdAt: Number(value.toString()),
      config: JSON.parse(config!.toString()) as WorkflowRunConfig,
    };
    if (payload!.length > 0) appended.initialBody = bodyOfStep(payload!.toString());
    this.remember(runId, appended, config!);
    return appended;
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
      [this.keys.workflowRun(runId), this.keys.workflowRunsFinished],
      [end.state, end.at, field, value, runId],
    );
    return ended === 1;
  }

  /**
   * Drops finished runs (their hash, steps, early notices and places in the orders) that ended before
   * `now - retentionMs`, and the earliest finished beyond `maxCount`: ranges of the finished-runs
   * sorted set, TRIM_STEP at a time, never a scan. Answers how many it dropped.
   */
  async trim(limits: { retentionMs: number; maxCount: number }, now = Date.now()): Promise<number> {
    const k = this.keys;
    let dropped = 0;
    for (let pass = 0; pass < TRIM_PASSES; pass++) {
      const expired = await this.redis.zrangebyscore(
        k.workflowRunsFinished,
        '-inf',
        `(${now - limits.retentionMs}`,
        'LIMIT',
        0,
        TRIM_STEP,
      );
      const over = (await this.redis.zcard(k.workflowRunsFinished)) - expired.length - limits.maxCount;
      // After the expired ones, the earliest finished of those left beyond maxCount.
      const [from, to] = [expired.length, expired.length + Math.min(over, TRIM_STEP) - 1];
      const earliest = over > 0 ? await this.redis.zrange(k.workflowRunsFinished, from, String(to)) : [];
      const runIds = [...expired, ...earliest];
      if (runIds.length === 0) break;
      dropped += Number(
        await dropWorkflowRuns.run(
          this.redis,
          [
            k.workflowRunsFinished,
            k.workflowRunOrder,
            ...runIds.flatMap((id) => [
              k.workflowRun(id),
              k.workflowSteps(id),
              k.workflowNotices(id),
              k.workflowStepIds(id),
            ]),
          ],
          runIds,
        ),
      );
      if (runIds.length < TRIM_STEP) break;
    }
    return dropped;
  }

  /**
   * A failed run's failure callback state (and its dead letter once it failed). `published`: the
   * callback was just stored, which never overwrites an outcome its delivery already recorded.
   * `ifFailedAs`: only while the callback is still the failed one with that dlqId. `messageId`:
   * the message it is sent again as (retryFailureFunction), which `ifSendingAs` names: only while
   * the callback is in progress as that message (its cancel). False when it set nothing.
   */
  async setCallbackState(
    runId: string,
    state: FailureCallbackState,
    options: {
      dlqId?: string;
      published?: boolean;
      ifFailedAs?: string;
      messageId?: string;
      ifSendingAs?: string;
    } = {},
  ): Promise<boolean> {
    const set = await setWorkflowCallbackState.run(
      this.redis,
      [this.keys.workflowRun(runId)],
      [
        state,
        options.dlqId ?? '',
        options.published ? '1' : '0',
        options.ifFailedAs ?? '',
        options.messageId ?? '',
        options.ifSendingAs ?? '',
      ],
    );
    return set === 1;
  }

  async get(runId: string): Promise<WorkflowRunRecord | undefined> {
    return recordOf(runId, await this.redis.hgetall(this.keys.workflowRun(runId)));
  }

  /**
   * The runs newest first from `cursor` (`<createdAt>:<runId>`, the first run of the page, as the
   * last page answered) that `matches`, at most `count`, and the cursor of the next page when
   * there is one. Runs are read in chunks by creation time, never all at once; a run created
   * during the paging is newer than the cursor and not on a later page.
   */
  async page(input: {
    cursor?: string;
    count: number;
    matches: (run: WorkflowRunRecord) => boolean;
  }): Promise<{ runs: WorkflowRunRecord[]; cursor?: string }> {
    const [fromScore, fromId] = parseCursor(input.cursor);
    const runs: WorkflowRunRecord[] = [];
    for (let offset = 0; ; offset += PAGE_CHUNK) {
      const chunk = await this.redis.zrevrangebyscore(
        this.keys.workflowRunOrder,
        fromScore,
        '-inf',
        'WITHSCORES',
        'LIMIT',
        offset,
        PAGE_CHUNK,
      );
      const entries: [string, string][] = [];
      for (let i = 0; i + 1 < chunk.length; i += 2) {
        const [id, score] = [chunk[i]!, chunk[i + 1]!];
        // Among runs of one millisecond, those after the cursor's id in reverse order were on the last page.
        if (fromId === undefined || score !== fromScore || id <= fromId) entries.push([id, score]);
      }
      const pipeline = this.redis.pipeline();
      for (const [id] of entries) pipeline.hgetall(this.keys.workflowRun(id));
      const replies = entries.length === 0 ? [] : ((await pipeline.exec()) ?? []);
      for (const [i, [id, score]] of entries.entries()) {
        const run = recordOf(id, (replies[i]?.[1] ?? {}) as Record<string, string>);
        if (!run || !input.matches(run)) continue;
        if (runs.length === input.count) return { runs, cursor: `${score}:${id}` };
        runs.push(run);
      }
      if (chunk.length < PAGE_CHUNK * 2) return { runs };
    }
  }

  /** The run's initial payload, base64, as its first step holds it. */
  async initialBody(runId: string): Promise<string> {
    const first = await this.redis.lindex(this.keys.workflowSteps(runId), 0);
    return first === null ? '' : bodyOfStep(first);
  }

  /** The run's steps in publish order, the initial payload first. */
  async steps(runId: string): Promise<RawStep[]> {
    const all = await this.redis.lrange(this.keys.workflowSteps(runId), 0, -1);
    return all.map((step) => JSON.parse(step) as RawStep);
  }
}
