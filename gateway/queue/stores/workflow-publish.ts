import type { EnqueueAnswer } from '../core/enqueue-answer.js';
import { InvalidRequestError, ResourceNotFoundError } from '../core/errors.js';
import type { QueueMessage, WorkflowPublish } from '../core/message.js';
import {
  buildRawStep,
  isCallRequest,
  workflowDeliveryHeaders,
  type RawStep,
  type WorkflowRunConfig,
} from '../core/workflow-message.js';
import type { WorkflowRunStore } from './workflow-run-store.js';
import { parseInvokeRequest } from '../core/workflow-invoke.js';

/**
 * Turns the workflow messages of a publish into the messages the queue stores, on the publish
 * path, before the ordinary enqueue scripts store them:
 * - a trigger (Upstash-Workflow-Init: true) starts the run and is its first delivery; a trigger of
 *   a run that exists is answered as a duplicate of the first, as the SDK expects (`deduplicated`);
 * - a step joins its run's steps and is delivered to the run's URL with the run's settings and
 *   the steps so far as its body;
 * - context.call's request is an ordinary message (its callback brings the answer back).
 * A step of a run that is not running is refused with a 400, which the SDK takes as "finished".
 */

/** The settings of the run `trigger` starts: what the SDK put on the trigger for every step. */
function runConfigOf(trigger: QueueMessage, url: string): WorkflowRunConfig {
  const config: WorkflowRunConfig = { url, headers: trigger.headers, retries: trigger.retries };
  if (trigger.retryDelay !== undefined) config.retryDelay = trigger.retryDelay;
  if (trigger.flowControl !== undefined) config.flowControl = trigger.flowControl;
  if (trigger.failureCallback !== undefined) config.failureCallback = trigger.failureCallback;
  if (trigger.label !== undefined) config.label = trigger.label;
  return config;
}

/**
 * One delivery of run `runId` to its URL: `published` gives its id and due time, the run the rest.
 * `initialBody` (the run's payload, base64) is read only for a run with a failure callback.
 */
function runMessage(input: {
  published: QueueMessage;
  runId: string;
  createdAt: number;
  config: WorkflowRunConfig;
  body: Buffer;
  initialBody?: string;
}): QueueMessage {
  const { published, runId, createdAt, config, body } = input;
  const message: QueueMessage = {
    id: published.id,
    destination: config.url,
    method: 'POST',
    // The run's headers win: context.headers stay the trigger's on every step.
    headers: {
      ...published.headers,
      ...config.headers,
      ...workflowDeliveryHeaders(runId, createdAt, config),
    },
    body,
    retries: config.retries,
    retried: 0,
    createdAt: published.createdAt,
    workflow: { runId, createdAt },
  };
  if (published.notBefore !== undefined) message.notBefore = published.notBefore;
  if (published.timeoutMs !== undefined) message.timeoutMs = published.timeoutMs;
  if (config.retryDelay !== undefined) message.retryDelay = config.retryDelay;
  if (config.flowControl !== undefined) message.flowControl = config.flowControl;
  if (config.label !== undefined) message.label = config.label;
  if (config.failureCallback === undefined) return message;
  message.failureCallback = config.failureCallback;
  message.workflow = { runId, createdAt, initialBody: input.initialBody ?? '' };
  return message;
}

function notRunning(runId: string, state: string): InvalidRequestError {
  return new InvalidRequestError(
    state === ''
      ? `workflow run ${runId} not found: a step needs a run started by a trigger`
      : `workflow run ${runId} is not running (${state}): it takes no more steps`,
  );
}

async function prepareOne(
  runs: WorkflowRunStore,
  published: QueueMessage,
  workflow: WorkflowPublish,
): Promise<QueueMessage | EnqueueAnswer> {
  const { runId } = workflow;
  if (isCallRequest(workflow)) return { ...published, workflowCall: true };
  if (workflow.init) {
    const config = runConfigOf(published, workflow.url);
    const createdAt = published.createdAt;
    let payload = published.body;
    if (workflow.invoke) {
      const invoke = parseInvokeRequest(published.body);
      // The invoker must be a running run of this binding: it is what the invoked run resumes.
      const invoker = await runs.get(invoke.invoker.runId);
      if (!invoker) throw new ResourceNotFoundError(`workflow run ${invoke.invoker.runId} not found`);
      if (invoker.state !== 'RUN_STARTED') throw notRunning(invoke.invoker.runId, invoker.state);
      payload = invoke.payload;
      config.invoker = invoke.invoker;
    }
    const firstStep = buildRawStep(published.id, payload, createdAt);
    const outcome = await runs.start({ runId, config, createdAt, firstStep });
    if (!outcome.started) return { messageId: outcome.firstMessageId, deduplicated: true };
    return runMessage({
      published,
      runId,
      createdAt,
      config,
      body: outcome.body,
      initialBody: firstStep.body,
    });
  }
  // One script: it refuses a run that is not running and answers the run's settings with the body.
  const outcome = await runs.append(runId, buildRawStep(published.id, published.body, published.createdAt));
  if (!outcome.appended) throw notRunning(runId, outcome.state);
  return runMessage({ published, runId, ...outcome });
}

/** A request's steps of one run (a parallel group's plan steps) are refused together when they do not all fit. */
async function assertRoomForSteps(runs: WorkflowRunStore, messages: readonly QueueMessage[]): Promise<void> {
  const perRun = new Map<string, RawStep[]>();
  for (const { workflowPublish, body, id, createdAt } of messages) {
    if (workflowPublish === undefined || workflowPublish.init || isCallRequest(workflowPublish)) continue;
    const steps = perRun.get(workflowPublish.runId) ?? [];
    perRun.set(workflowPublish.runId, [...steps, buildRawStep(id, body, createdAt)]);
  }
  for (const [runId, steps] of perRun) if (steps.length > 1) await runs.assertRoomFor(runId, steps);
}

/**
 * Each message as the queue stores it, or, for a trigger of a run that exists, its answer. Plain
 * messages pass unchanged; every message leaves without its `workflowPublish`.
 */
export async function prepareWorkflowMessages(
  runs: WorkflowRunStore,
  messages: readonly QueueMessage[],
): Promise<(QueueMessage | EnqueueAnswer)[]> {
  await assertRoomForSteps(runs, messages);
  const prepared: (QueueMessage | EnqueueAnswer)[] = [];
  for (const message of messages) {
    const { workflowPublish, ...published } = message;
    prepared.push(
      workflowPublish === undefined ? message : await prepareOne(runs, published, workflowPublish),
    );
  }
  return prepared;
}

export function isEnqueueAnswer(value: QueueMessage | EnqueueAnswer): value is EnqueueAnswer {
  return 'messageId' in value;
}
