import { applyRetryOverrides, buildRetriedMessage, type RetryOverrides } from './dlq-retry.js';
import { storeCall } from './store-call.js';
import type { DeadLetter } from '../core/dead-letter.js';
import { InvalidRequestError } from '../core/errors.js';
import { createMessage, type QueueMessage } from '../core/message.js';
import {
  workflowDeliveryHeaders,
  type WorkflowRunConfig,
  type WorkflowRunRecord,
} from '../core/workflow-message.js';
import { BindingStores } from '../stores/binding-stores.js';
import type { LetterOutcome } from '../stores/workflow-letter-store.js';
import { newRunOf } from '../stores/workflow-publish.js';

/**
 * What the workflow DLQ does with one entry, for the bulk routes (workflow-dlq-routes.ts) and the
 * single-entry ones (workflow-dlq-entry-routes.ts) alike: resume its failed run as a new run from
 * the failed step, or restart it as a new run from its payload. Each is one script
 * (act-on-workflow-letter): the new run, its first delivery and the entry's removal together, so
 * two requests on one entry start one run and a replica dying midway changes nothing.
 */

/** What an action reads and writes: the binding's stores (an ApiRequest has them). */
type StoresOf = ConstructorParameters<typeof BindingStores>[0];

export type WorkflowLetter = DeadLetter & { workflow: NonNullable<DeadLetter['workflow']> };

/** The new run an action started, as QStash answers it. */
export interface StartedRun {
  workflowRunId: string;
  workflowCreatedAt: number;
}

export interface EntryAction {
  letter: WorkflowLetter;
  /** The letter's run, RUN_FAILED. */
  run: WorkflowRunRecord;
  overrides: RetryOverrides;
  /** The new run's id. */
  runId: string;
}

export function isWorkflowLetter(letter: DeadLetter | undefined): letter is WorkflowLetter {
  return letter?.workflow !== undefined;
}

/** A dlqIds request needs every entry's run kept and failed: the 400 when it is not. */
export function notActionable(
  letter: WorkflowLetter,
  run: WorkflowRunRecord | undefined,
): InvalidRequestError {
  return new InvalidRequestError(
    run === undefined
      ? `workflow run ${letter.workflow.runId} of dead letter ${letter.dlqId} is no longer kept`
      : `workflow run ${run.runId} is not failed (${run.state}): nothing to resume or restart`,
  );
}

/**
 * The failed step of `run` sent again as the first delivery of the run it resumes as: the dead
 * letter with the request's overrides, under the new run's id and creation time. The new run's
 * settings are the failed run's with the same overrides (Upstash: they apply to the remaining
 * steps), without its invoker, which the failure already resumed.
 */
function resumedStep(input: {
  letter: WorkflowLetter;
  run: WorkflowRunRecord;
  overrides: RetryOverrides;
  as: { runId: string; createdAt: number };
  /** The run's payload, which a failure callback's body carries (none without a failure callback). */
  initialBody?: string;
}): { message: QueueMessage; config: WorkflowRunConfig } {
  const { letter, run, overrides, as } = input;
  const message = buildRetriedMessage(letter, overrides, as.createdAt);
  // The letter's settings are the run's, as each step's delivery took them, the overrides applied.
  const { invoker: _invoker, ...kept } = run.config;
  const config: WorkflowRunConfig = { ...kept, retries: message.retries };
  if (message.retryDelay !== undefined) config.retryDelay = message.retryDelay;
  if (message.flowControl !== undefined) config.flowControl = message.flowControl;
  if (message.failureCallback !== undefined) config.failureCallback = message.failureCallback;
  if (message.label !== undefined) config.label = message.label;
  message.headers = { ...message.headers, ...workflowDeliveryHeaders(as.runId, as.createdAt, config) };
  // Still a step of a run: failing again fails the new run, with its failure callback.
  message.workflow = {
    ...as,
    ...(message.failureCallback !== undefined && { initialBody: input.initialBody ?? '' }),
  };
  return { message, config };
}

/** What an action answers: the new run once it started; none when the entry went or its run is no longer failed. */
function startedOf(outcome: LetterOutcome, as: { runId: string; createdAt: number }): StartedRun | undefined {
  if (outcome === 'id-taken') throw new InvalidRequestError(`workflow run ${as.runId} exists`);
  return outcome === 'started' ? { workflowRunId: as.runId, workflowCreatedAt: as.createdAt } : undefined;
}

/**
 * Resumes one failed run as a new run `runId` (Upstash: "a new workflow run ID is generated, but
 * the workflow maintains the state and results from previously completed steps"): the run's steps
 * are copied to the new id, its failed step is sent again there, and the entry leaves the DLQ, in
 * one script. The failed run stays RUN_FAILED. Undefined, nothing changed, when the entry is gone
 * (another request acted on it) or the run is no longer failed; a run `runId` that exists is a
 * 400, the entry kept.
 */
export async function resumeAsNewRun(request: StoresOf, input: EntryAction): Promise<StartedRun | undefined> {
  const stores = new BindingStores(request);
  const runs = stores.workflowRuns();
  const { letter, run, overrides, runId } = input;
  const initialBody = run.config.failureCallback
    ? await storeCall('read the run', () => runs.initialBody(run.runId))
    : undefined;
  const as = { runId, createdAt: Date.now() };
  const { message, config } = resumedStep({ letter, run, overrides, as, initialBody });
  const outcome = await storeCall('resume the workflow run', () =>
    stores.workflowLetters().resume({
      dlqId: letter.dlqId,
      failedRunId: run.runId,
      run: { ...as, config },
      delivery: message,
    }),
  );
  return startedOf(outcome, as);
}

/** The trigger of a new run with `run`'s URL, settings and payload, the request's overrides applied. */
function restartTrigger(
  run: WorkflowRunRecord,
  input: { payload: Buffer; overrides: RetryOverrides; runId: string; now: number },
) {
  const { config } = run;
  const { payload, overrides, runId, now } = input;
  const trigger = createMessage(
    {
      destination: config.url,
      method: 'POST',
      headers: config.headers,
      body: payload,
      retries: config.retries,
      workflowPublish: { runId, init: true, url: config.url },
    },
    now,
  );
  return applyRetryOverrides(trigger, config, overrides);
}

/**
 * Restarts one failed run as a new run `runId` (its payload, URL and settings, the overrides
 * applied; not its invoker, which its failure already resumed), and the entry leaves the DLQ, in
 * one script. Undefined, nothing changed, when the entry is gone or its run no longer failed; a
 * run `runId` that exists is a 400, the entry kept.
 */
export async function restartAsNewRun(
  request: StoresOf,
  input: EntryAction,
): Promise<StartedRun | undefined> {
  const stores = new BindingStores(request);
  const { letter, run, overrides, runId } = input;
  const payload = Buffer.from(
    await storeCall('read the run', () => stores.workflowRuns().initialBody(run.runId)),
    'base64',
  );
  const now = Date.now();
  const { workflowPublish, ...trigger } = restartTrigger(run, { payload, overrides, runId, now });
  const { config, firstStep, delivery } = newRunOf(trigger, workflowPublish!);
  const outcome = await storeCall('restart the workflow run', () =>
    stores.workflowLetters().restart({
      dlqId: letter.dlqId,
      failedRunId: run.runId,
      run: { runId, config, createdAt: now },
      delivery,
      firstStep,
    }),
  );
  return startedOf(outcome, { runId, createdAt: now });
}

/**
 * Cancels the failure callback of run `runId` that retryFailureFunction sent again, while it is
 * in progress: its message is cancelled, then the run's callback is CALLBACK_CANCELED (only while
 * it is still in progress as that message). A 400, nothing changed, when no such callback is in
 * progress, or when its message is no longer pending (delivered, or dead-lettered again: its
 * outcome is then the state). A send that had started before the cancel still arrives, and its
 * outcome replaces CALLBACK_CANCELED.
 */
export async function cancelResentCallback(
  request: StoresOf,
  input: { runId: string; callback: WorkflowRunRecord['callback'] },
): Promise<void> {
  const { runId, callback } = input;
  const messageId = callback?.state === 'CALLBACK_INPROGRESS' ? callback.messageId : undefined;
  if (messageId === undefined)
    throw new InvalidRequestError(
      `workflow run ${runId} has no failure callback in progress that was sent again (${callback?.state ?? 'none'})`,
    );
  const stores = new BindingStores(request);
  const cancelled = await storeCall('cancel the failure callback', () =>
    stores.pending().cancel([messageId]),
  );
  if (cancelled === 0)
    throw new InvalidRequestError(`the failure callback of workflow run ${runId} is no longer pending`);
  await storeCall('record the callback', () =>
    stores.workflowRuns().setCallbackState(runId, 'CALLBACK_CANCELED', { ifSendingAs: messageId }),
  );
}
