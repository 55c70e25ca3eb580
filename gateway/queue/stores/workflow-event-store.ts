import type { Redis } from 'ioredis';
import { InvalidRequestError } from '../core/errors.js';
import type { QueueKeys } from '../core/keys.js';
import { createMessage, newMessageId, type QueueMessage } from '../core/message.js';
import {
  notifiedAnswer,
  RUN_WAIT_FIELD_PREFIX,
  runWaitField,
  waiterAnswer,
  waitStepBody,
  type WaitRequest,
  type WorkflowWaiter,
} from '../core/workflow-event.js';
import { invokeResultStep } from '../core/workflow-invoke.js';
import type { FailureCallbackState, WorkflowRunRecord } from '../core/workflow-message.js';
import { notifyWorkflowRun } from '../scripts/notify-workflow-run.js';
import { registerWorkflowWait } from '../scripts/register-workflow-wait.js';
import { isEnqueueAnswer, prepareWorkflowMessages } from './workflow-publish.js';
import type { WorkflowRunStore } from './workflow-run-store.js';

/**
 * A binding's workflow events: runs waiting for them (context.waitForEvent), notifies, the waits'
 * timeouts, and the end of an invoked run (context.invoke), which resumes its invoker. A waiter is
 * taken once, by one HDEL or one script, whoever comes first of a notify and its timer; the taker
 * appends the wait's step to the run and publishes its delivery, as the SDK's own step publish
 * would be. Between the two a crash loses that resumption (the run
 * then waits); docs/workflow.md says so.
 */

type Json = Record<string, unknown>;

interface WorkflowEventDeps {
  runs: WorkflowRunStore;
  /** Stores one message for delivery (with its flow control, if any). */
  enqueue(message: QueueMessage): Promise<void>;
  /** Cancels pending messages by id. */
  cancel(ids: string[]): Promise<void>;
}

function fieldOf(waiter: Pick<WorkflowWaiter, 'runId' | 'timerId'>): string {
  return `${waiter.runId}/${waiter.timerId}`;
}

export class WorkflowEventStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: QueueKeys,
    private readonly deps: WorkflowEventDeps,
  ) {}

  /**
   * Run `runId` waits for `eventId`: resumed at once by an event notified to it before, or kept as
   * a waiter with a timer due at its deadline. Answers the id of the message that resumes it or
   * times it out.
   */
  async wait(input: {
    runId: string;
    eventId: string;
    request: WaitRequest;
    headers: Record<string, string>;
    now?: number;
  }): Promise<{ messageId: string }> {
    const { runId, eventId, request } = input;
    const now = input.now ?? Date.now();
    const waiter: WorkflowWaiter = {
      runId,
      eventId,
      timerId: newMessageId(),
      url: request.url,
      headers: input.headers,
      deadline: now + request.timeoutMs,
      timeoutUrl: request.timeoutUrl,
      timeoutHeaders: request.timeoutHeaders,
      step: request.step,
      since: now,
    };
    const [noticed, data] = (await registerWorkflowWait.runForBuffers(
      this.redis,
      [this.keys.workflowNotices(runId), this.keys.workflowWaiters(eventId), this.keys.workflowRun(runId)],
      [eventId, fieldOf(waiter), JSON.stringify(waiter), runWaitField(waiter.timerId)],
    )) as [number, Buffer];
    if (noticed === 1) {
      const resumed = await this.resume(waiter, { data });
      return { messageId: resumed?.id ?? waiter.timerId };
    }
    const timer = createMessage(
      { destination: waiter.url, method: 'POST', headers: {}, body: Buffer.alloc(0), retries: 0 },
      now,
    );
    await this.deps.enqueue({
      ...timer,
      id: waiter.timerId,
      notBefore: waiter.deadline,
      workflowWait: { eventId, field: fieldOf(waiter) },
    });
    return { messageId: waiter.timerId };
  }

  /** Every run waiting for `eventId` is resumed with `data`; answers each one resumed. */
  async notify(eventId: string, data: Buffer): Promise<Json[]> {
    const key = this.keys.workflowWaiters(eventId);
    const answers: Json[] = [];
    for (const json of Object.values(await this.redis.hgetall(key))) {
      const waiter = JSON.parse(json) as WorkflowWaiter;
      if (!(await this.take(waiter))) continue;
      const answer = await this.resumeNotified(waiter, data);
      if (answer) answers.push(answer);
    }
    return answers;
  }

  /**
   * `eventId` notified to run `runId` only: its waiter resumed, or the event kept for its next wait.
   * Answers the resumed waiter, or undefined when the event was kept.
   */
  async notifyRun(runId: string, eventId: string, data: Buffer): Promise<Json | undefined> {
    const [taken, json] = (await notifyWorkflowRun.runForBuffers(
      this.redis,
      [this.keys.workflowWaiters(eventId), this.keys.workflowNotices(runId), this.keys.workflowRun(runId)],
      [`${runId}/`, eventId, data, RUN_WAIT_FIELD_PREFIX],
    )) as [number, Buffer?];
    if (taken !== 1 || json === undefined) return undefined;
    return this.resumeNotified(JSON.parse(json.toString('utf8')) as WorkflowWaiter, data);
  }

  /** The runs waiting for `eventId`; a waiter whose run ended meanwhile is dropped. */
  async waiters(eventId: string): Promise<Json[]> {
    const key = this.keys.workflowWaiters(eventId);
    const answers: Json[] = [];
    for (const [field, json] of Object.entries(await this.redis.hgetall(key))) {
      const waiter = JSON.parse(json) as WorkflowWaiter;
      const run = await this.deps.runs.get(waiter.runId);
      if (run?.state === 'RUN_STARTED') answers.push(waiterAnswer(waiter));
      else await this.redis.hdel(key, field);
    }
    return answers;
  }

  /**
   * The waiters of running run `run` (as its hash read points at them), each read by its event and
   * field: what its logs show it waiting for. A pointer whose waiter was taken is skipped.
   */
  async waitersOfRun(run: WorkflowRunRecord): Promise<WorkflowWaiter[]> {
    const waits = run.state === 'RUN_STARTED' ? (run.waits ?? []) : [];
    if (waits.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const wait of waits)
      pipeline.hget(
        this.keys.workflowWaiters(wait.eventId),
        fieldOf({ runId: run.runId, timerId: wait.timerId }),
      );
    const replies = (await pipeline.exec()) ?? [];
    return replies.flatMap(([, json]) =>
      typeof json === 'string' ? [JSON.parse(json) as WorkflowWaiter] : [],
    );
  }

  /** A wait's timer is due: its waiter, if no notify took it, resumes timed out. */
  async timeOut(wait: { eventId: string; field: string }): Promise<void> {
    const json = await this.redis.hget(this.keys.workflowWaiters(wait.eventId), wait.field);
    if (json === null) return;
    const waiter = JSON.parse(json) as WorkflowWaiter;
    if (await this.take(waiter)) await this.resume(waiter, { timedOut: true });
  }

  /**
   * Takes `waiter` from its event's waiters (one HDEL: of a notify and the wait's timer, one wins)
   * and drops its run's pointer to it, in one MULTI. False when another took it first.
   */
  private async take(waiter: WorkflowWaiter): Promise<boolean> {
    const replies = await this.redis
      .multi()
      .hdel(this.keys.workflowWaiters(waiter.eventId), fieldOf(waiter))
      .hdel(this.keys.workflowRun(waiter.runId), runWaitField(waiter.timerId))
      .exec();
    return replies?.[0]?.[1] === 1;
  }

  private async resumeNotified(waiter: WorkflowWaiter, data: Buffer): Promise<Json | undefined> {
    const resumed = await this.resume(waiter, { data });
    if (!resumed) return undefined;
    await this.deps.cancel([waiter.timerId]);
    return notifiedAnswer(waiter, resumed.id, resumed.workflow?.createdAt ?? 0);
  }

  /**
   * Ends run `runId` (WorkflowRunStore.finish) and, when this call ended it, resumes the run that
   * invoked it (context.invoke), if any, with its result: every way a run ends (its DELETE, a
   * cancel, a dead-lettered step) goes through here, and only the one whose finish succeeds
   * resumes the invoker. False when the run was not running.
   */
  async finishRun(runId: string, end: Parameters<WorkflowRunStore['finish']>[1]): Promise<boolean> {
    if (!(await this.deps.runs.finish(runId, end))) return false;
    await this.resumeInvoker(runId);
    return true;
  }

  /** A failed run's failure callback moved on (WorkflowRunStore.setCallbackState). */
  async failureCallbackMoved(
    runId: string,
    state: FailureCallbackState,
    options: Parameters<WorkflowRunStore['setCallbackState']>[2] = {},
  ): Promise<void> {
    await this.deps.runs.setCallbackState(runId, state, options);
  }

  private async resumeInvoker(runId: string): Promise<void> {
    const run = await this.deps.runs.get(runId);
    const invoker = run?.config.invoker;
    if (!run || !invoker) return;
    await this.resumeRun(invoker, invokeResultStep(invoker, run));
  }

  private resume(
    waiter: WorkflowWaiter,
    outcome: { data: Buffer } | { timedOut: true },
  ): Promise<QueueMessage | undefined> {
    return this.resumeRun(waiter, waitStepBody(waiter, outcome));
  }

  /**
   * `step` joins the run and its delivery is stored, as the SDK's step publish would be;
   * undefined when the run is no longer running (it takes no step).
   */
  private async resumeRun(
    run: { runId: string; url: string; headers: Record<string, string> },
    step: Buffer,
  ): Promise<QueueMessage | undefined> {
    const published = createMessage({
      destination: run.url,
      method: 'POST',
      headers: run.headers,
      body: step,
      retries: 0,
    });
    let prepared;
    try {
      [prepared] = await prepareWorkflowMessages(this.deps.runs, [
        { ...published, workflowPublish: { runId: run.runId, init: false, url: run.url } },
      ]);
    } catch (err) {
      if (err instanceof InvalidRequestError) return undefined;
      throw err;
    }
    if (prepared === undefined || isEnqueueAnswer(prepared)) return undefined;
    await this.deps.enqueue(prepared);
    return prepared;
  }
}
