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
import {
  WORKFLOW_INLINE_STEPS_BYTES,
  type StepDeliveries,
  type WorkflowRunStore,
} from './workflow-run-store.js';
import type { KnownWorkflowRun } from './known-workflow-runs.js';
import { parseInvokeRequest } from '../core/workflow-invoke.js';
import type { MessageStore } from './message-store.js';

/**
 * Turns the workflow messages of a publish into the messages the queue stores, on the publish
 * path, before the ordinary enqueue scripts store them:
 * - a trigger (Upstash-Workflow-Init: true) starts the run and is its first delivery; a trigger of
 *   a run that exists is answered as a duplicate of the first, as the SDK expects (`deduplicated`);
 * - a step joins its run's steps and is delivered to the run's URL with the run's settings and
 *   the steps so far as its body;
 * - context.call's request is an ordinary message (its callback brings the answer back).
 * A step of a run that is not running is refused with a 400, which the SDK takes as "finished".
 * Given the binding's message store, the steps of a run this replica knows (known-workflow-runs.ts)
 * and that has no flow-control key, in a request of nothing else, are stored with their append, in
 * its script, and answered as stored: a step costs one script and its delivery's body never comes
 * back through the gateway.
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

/**
 * The body of a new run's first delivery, as start-workflow-run's steps_body makes it for a run of
 * one step: the payload step as the SDK's step list, or empty past the inline limit (LazyFetch;
 * steps_body counts each step with its comma, so one byte more than the list).
 */
function firstDeliveryBody(firstStep: RawStep): Buffer {
  const list = `[${JSON.stringify(firstStep)}]`;
  return Buffer.from(Buffer.byteLength(list) + 1 > WORKFLOW_INLINE_STEPS_BYTES ? '' : list, 'utf8');
}

/**
 * The run a trigger (not an invoke) would start and its first delivery, stored by the caller (a
 * DLQ restart stores them with the entry's removal in one script, workflow-letter-store.ts).
 */
export function newRunOf(
  trigger: QueueMessage,
  workflow: WorkflowPublish,
): { config: WorkflowRunConfig; firstStep: RawStep; delivery: QueueMessage } {
  const config = runConfigOf(trigger, workflow.url);
  const firstStep = buildRawStep(trigger.id, trigger.body, trigger.createdAt);
  const delivery = runMessage({
    published: trigger,
    runId: workflow.runId,
    createdAt: trigger.createdAt,
    config,
    body: firstDeliveryBody(firstStep),
    initialBody: firstStep.body,
  });
  return { config, firstStep, delivery };
}

/** What a trigger's run starts with, once its trigger is checked: nothing of it is stored yet. */
interface RunStart {
  published: QueueMessage;
  runId: string;
  config: WorkflowRunConfig;
  firstStep: RawStep;
}

/**
 * Checks a trigger and reads what its run starts with, storing nothing: an invoke's body must parse
 * and its invoker be a running run of this binding (it is what the invoked run resumes).
 */
async function runStartOf(
  runs: WorkflowRunStore,
  published: QueueMessage,
  workflow: WorkflowPublish,
): Promise<RunStart> {
  const config = runConfigOf(published, workflow.url);
  let payload = published.body;
  if (workflow.invoke) {
    const invoke = parseInvokeRequest(published.body);
    const invoker = await runs.get(invoke.invoker.runId);
    if (!invoker) throw new ResourceNotFoundError(`workflow run ${invoke.invoker.runId} not found`);
    if (invoker.state !== 'RUN_STARTED') throw notRunning(invoke.invoker.runId, invoker.state);
    payload = invoke.payload;
    config.invoker = invoke.invoker;
  }
  const firstStep = buildRawStep(published.id, payload, published.createdAt);
  return { published, runId: workflow.runId, config, firstStep };
}

/** A trigger starts its run and is its first delivery; one of a run that exists answers as its duplicate. */
async function startRun(runs: WorkflowRunStore, start: RunStart): Promise<QueueMessage | EnqueueAnswer> {
  const { published, runId, config, firstStep } = start;
  const createdAt = published.createdAt;
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

/** A step of a run (not a trigger, not context.call's request): appended with its request's others. */
function isStep(workflow: WorkflowPublish | undefined): workflow is WorkflowPublish {
  return workflow !== undefined && !workflow.init && !isCallRequest(workflow);
}

const NO_BODY = Buffer.alloc(0);

/**
 * The deliveries of `steps` of run `runId` built from what this replica knows of the run, but for
 * their bodies, for the append's script to store; none for a run it does not know, or with a
 * flow-control key (its deliveries wait for the key's token: FlowControlStore stores them).
 */
function deliveriesOf(
  store: MessageStore,
  run: KnownWorkflowRun | undefined,
  runId: string,
  steps: readonly QueueMessage[],
): StepDeliveries | undefined {
  if (run === undefined || run.config.flowControl !== undefined) return undefined;
  const now = Date.now();
  return {
    run,
    eventCap: store.eventCap,
    messages: steps.map(({ workflowPublish: _, ...published }) => {
      const message = runMessage({ published, runId, ...run, body: NO_BODY });
      const { due, encoded, created } = store.storedForm(message, now);
      return { id: message.id, due, head: encoded, created };
    }),
  };
}

/**
 * Appends run `runId`'s steps of a request (one step, or a parallel group's plan steps) in one
 * script, all or none, and keeps each one's delivery by its message id, or, when `store` is given
 * and the run is known, its answer once that script stored the delivery.
 */
async function appendSteps(input: {
  runs: WorkflowRunStore;
  runId: string;
  steps: readonly QueueMessage[];
  into: Map<string, QueueMessage | EnqueueAnswer>;
  store: MessageStore | undefined;
}): Promise<void> {
  const { runs, runId, steps, into, store } = input;
  const raw = steps.map(({ id, body, createdAt }) => buildRawStep(id, body, createdAt));
  const deliveries = store && deliveriesOf(store, runs.known(runId), runId, steps);
  // One script: it refuses a run that is not running and either stores the deliveries or answers
  // the run's settings with their bodies.
  const outcome = await runs.append(runId, raw, deliveries);
  if (!outcome.appended) throw notRunning(runId, outcome.state);
  if ('stored' in outcome) {
    for (const { id } of steps) into.set(id, { messageId: id, deduplicated: false });
    return;
  }
  const { bodies, ...run } = outcome;
  steps.forEach(({ workflowPublish: _, ...published }, i) =>
    into.set(published.id, runMessage({ published, runId, ...run, body: bodies[i]! })),
  );
}

/**
 * Each message as the queue stores it, or, for a trigger of a run that exists, its answer, and,
 * given `store` (the binding's message store) and a request of one run's steps only, for a step
 * stored with its append, its answer (not deduplicated). Plain messages pass unchanged; every
 * message leaves without its `workflowPublish`. A run's steps are appended together where its first one stands (after any
 * trigger before it in the request); steps of two runs in one request are a 400, nothing stored.
 */
export async function prepareWorkflowMessages(
  runs: WorkflowRunStore,
  messages: readonly QueueMessage[],
  store?: MessageStore,
): Promise<(QueueMessage | EnqueueAnswer)[]> {
  const stepsOf = new Map<string, QueueMessage[]>();
  let steps = 0;
  for (const message of messages)
    if (isStep(message.workflowPublish)) {
      steps += 1;
      stepsOf.set(message.workflowPublish.runId, [
        ...(stepsOf.get(message.workflowPublish.runId) ?? []),
        message,
      ]);
    }
  // Each run's limits are checked in its own script: steps of two runs in one request could store
  // the first run's and refuse the second's, a request half taken. The SDK publishes one run's
  // steps per request (submitParallelSteps: its context's run), so a mix is refused before anything.
  if (stepsOf.size > 1)
    throw new InvalidRequestError(
      `Upstash-Workflow-RunId: a request's steps must be of one run, not ${[...stepsOf.keys()].join(', ')}`,
    );
  // A trigger starts its run in its own script before a later step's run is read, so a step refused
  // (its run not running, unknown) would leave the trigger's run started by a request answered 400.
  // The SDK never mixes them (triggers go alone or together, a run's steps with that run's), so a
  // request that does is refused before anything.
  if (steps > 0 && messages.some((message) => message.workflowPublish?.init === true))
    throw new InvalidRequestError(
      "Upstash-Workflow-Init: a request's triggers and steps must be published separately",
    );
  // Steps are stored with their append only when they are the whole request: the request's other
  // messages go in later scripts, and if one of those fails the client publishes the request again,
  // which would store the steps' deliveries a second time (the two-script path stores them in the
  // same script as the other messages of their group, all or none).
  const storeWithAppend = steps === messages.length;
  // Every trigger is checked before any starts its run (each start is its own script): a later
  // trigger refused (an invoke naming an unknown invoker) would leave an earlier one's run started
  // by a request answered 4xx (found by the workflow state fuzz).
  const starts: (RunStart | undefined)[] = [];
  for (const { workflowPublish, ...published } of messages)
    starts.push(
      workflowPublish?.init === true && !isCallRequest(workflowPublish)
        ? await runStartOf(runs, published, workflowPublish)
        : undefined,
    );
  const appended = new Map<string, QueueMessage | EnqueueAnswer>();
  const prepared: (QueueMessage | EnqueueAnswer)[] = [];
  for (const [i, message] of messages.entries()) {
    const { workflowPublish, ...published } = message;
    const start = starts[i];
    if (workflowPublish === undefined) prepared.push(message);
    else if (isCallRequest(workflowPublish)) prepared.push({ ...published, workflowCall: true });
    else if (start !== undefined) prepared.push(await startRun(runs, start));
    else {
      const { runId } = workflowPublish;
      if (!appended.has(message.id))
        await appendSteps({
          runs,
          runId,
          steps: stepsOf.get(runId)!,
          into: appended,
          store: storeWithAppend ? store : undefined,
        });
      prepared.push(appended.get(message.id)!);
    }
  }
  return prepared;
}

export function isEnqueueAnswer(value: QueueMessage | EnqueueAnswer): value is EnqueueAnswer {
  return 'messageId' in value;
}
