import type { Logger } from 'winston';
import { DomainError } from '../../domain-error.js';
import { publishCallCallback, publishCallback, publishFailureCallback } from './callback-publisher.js';
import { buildDeadLetter, UNREADABLE_MESSAGE_ID, type DeadLetter } from '../core/dead-letter.js';
import { USER_AGENT, type AttemptResult, type Deliverer, type DeliveryRequest } from './http-delivery.js';
import { slotQueueOf, type QueueMessage } from '../core/message.js';
import { CorruptMessageError, decodeMessage } from '../core/message-codec.js';
import type { MessageStore } from '../stores/message-store.js';
import type { StreamEntry } from '../stores/stream-entry.js';
import type { DeadLetterLimits } from '../stores/dead-letter-queue.js';
import { redactDestination } from '../../queue-url/redact-destination.js';
import { decideAfterFailure, isNonRetryableResponse, type RetryPolicyOptions } from './retry-policy.js';
import type { DeliverySigner } from './signer.js';
import type { WorkflowEventStore } from '../stores/workflow-event-store.js';

export interface ProcessEntryContext {
  store: MessageStore;
  consumer: string;
  deliverer: Deliverer;
  signer: DeliverySigner;
  logger: Logger;
  /**
   * The logger's isDebugEnabled(), asked once for the context (the gateway's request log does the
   * same): winston's builds two arrays a call, 1% of a delivery's heap when asked per delivery.
   */
  debug: boolean;
  policy: RetryPolicyOptions;
  deliveryTimeoutMs: number;
  deadLetterLimits: DeadLetterLimits;
  /** How much of a response a callback reports (the largest message body). */
  maxCallbackBodyBytes: number;
  /**
   * The binding's workflow events: a due wait timer times its waiter out; a dead-lettered step
   * fails its run (and resumes the run's invoker).
   */
  workflowEvents: WorkflowEventStore;
  now?: () => number;
}

/** Signing or sending threw instead of returning an attempt's result: counted as a failed attempt. */
export class UnexpectedDeliveryError extends DomainError<'UNEXPECTED_DELIVERY_ERROR'> {
  readonly code = 'UNEXPECTED_DELIVERY_ERROR';
  constructor(cause: unknown) {
    super(`UNEXPECTED_DELIVERY_ERROR: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/**
 * 'admitted': a flow-control message that reached the stream without its key's token (through a
 * queue, a schedule or a DLQ retry) now waits in its key, which starts it again holding one.
 */
export type EntryOutcome =
  'delivered' | 'retry-scheduled' | 'dead-lettered' | 'cancelled' | 'skipped' | 'admitted';

/** The headers of one delivery: the message's own, then the ones the Receiver and QStash users expect. */
export function deliveryHeaders(message: QueueMessage, signature: string): Record<string, string> {
  // Copied, then set: on Node 20 `{ ...message.headers, more }` costs about 3.5 us a delivery against
  // 0.1 (docs/queue.md, Performance).
  const headers: Record<string, string> = Object.assign({}, message.headers);
  headers['upstash-signature'] = signature;
  headers['upstash-message-id'] = message.id;
  headers['upstash-retried'] = String(message.retried);
  headers['user-agent'] = USER_AGENT;
  if (message.topicName !== undefined) headers['upstash-topic-name'] = message.topicName;
  if (message.scheduleId !== undefined) headers['upstash-schedule-id'] = message.scheduleId;
  return headers;
}

function unreadableLetter(stored: Buffer, now: number, error: CorruptMessageError): DeadLetter {
  const placeholder: QueueMessage = {
    id: UNREADABLE_MESSAGE_ID,
    destination: '',
    method: '',
    headers: {},
    body: stored,
    retries: 0,
    retried: 0,
    createdAt: 0,
  };
  return buildDeadLetter({
    message: placeholder,
    reason: 'unreadable',
    failedAt: now,
    lastError: error.message,
  });
}

/**
 * One attempt at one stream entry, start to finish: sign, send, then acknowledge, schedule the
 * retry or dead-letter it. Redis errors propagate: the entry then stays pending and is reclaimed.
 */
export async function processEntry(ctx: ProcessEntryContext, entry: StreamEntry): Promise<EntryOutcome> {
  const now = ctx.now ?? Date.now;
  if (!entry.stored) {
    // Deleted after it was handed out (another consumer finished it); only the pending entry is left.
    await ctx.store.complete(entry.entryId, '');
    return 'skipped';
  }
  let message: QueueMessage;
  try {
    message = decodeMessage(entry.stored);
  } catch (err) {
    if (!(err instanceof CorruptMessageError)) throw err;
    ctx.logger.error('unreadable queue message dead-lettered', {
      entryId: entry.entryId,
      error: err.message,
    });
    const letter = unreadableLetter(entry.stored, now(), err);
    await ctx.store.deadLetter({
      entryId: entry.entryId,
      consumer: ctx.consumer,
      letter,
      limits: ctx.deadLetterLimits,
    });
    return 'dead-lettered';
  }

  const outcome = await deliverMessage(ctx, entry, message, now);
  // Waiting in its flow-control key, the message still holds its queue slot and holds no token.
  if (outcome === 'admitted') return outcome;
  // A queue's message (or the callback of one) holds its slot through its retries; any other
  // outcome frees it.
  const slotQueue = slotQueueOf(message);
  if (slotQueue !== undefined && outcome !== 'retry-scheduled')
    await ctx.store.releaseQueueSlot(slotQueue, message.id);
  // A flow-control token is held by one attempt only: a retry passes the key's limits again.
  if (message.flowControl !== undefined)
    await ctx.store.releaseFlowControlToken(message.flowControl, message.id);
  return outcome;
}

/**
 * A delivery's log fields, built only for a log line that is written: hashing the destination on
 * every delivery cost more than the rest of the bookkeeping.
 */
function logFieldsOf(message: QueueMessage): Record<string, unknown> {
  return { messageId: message.id, ...redactDestination(message.destination), attempt: message.retried + 1 };
}

async function deliverMessage(
  ctx: ProcessEntryContext,
  entry: StreamEntry,
  message: QueueMessage,
  now: () => number,
): Promise<EntryOutcome> {
  const check = await ctx.store.checkEntry(entry.entryId, message, now());
  if (check === 'admitted') {
    if (ctx.debug) ctx.logger.debug('message admitted to its flow-control key', logFieldsOf(message));
    return 'admitted';
  }
  if (check === 'gone') {
    // Cancelled while this worker held it (or finished by another consumer): never sent.
    await ctx.store.complete(entry.entryId, message.id);
    if (ctx.debug) ctx.logger.debug('cancelled message not delivered', logFieldsOf(message));
    return 'cancelled';
  }
  if (message.workflowWait !== undefined) {
    // A wait's timer is not sent anywhere: it resumes its run with a timed-out step, once.
    await ctx.workflowEvents.timeOut(message.workflowWait);
    await ctx.store.complete(entry.entryId, message.id);
    return 'delivered';
  }
  let result: AttemptResult;
  try {
    result = await attemptDelivery(ctx, message);
  } catch (err) {
    // A bug, not the destination's doing; left pending, the entry would be reclaimed and fail the
    // same way forever without its retry count ever rising. It fails this attempt instead.
    const failure = new UnexpectedDeliveryError(err);
    ctx.logger.error('delivery attempt failed unexpectedly', {
      ...logFieldsOf(message),
      error: failure.message,
    });
    return handleFailure(ctx, entry, message, { ok: false, refused: false, error: failure.message }, now());
  }
  // Asked here too: an awaited call of an async function that returns at once still costs its
  // promise and the await's, on every delivery without a callback.
  if (message.callback !== undefined) await publishCallback(ctx.store, message, result);
  if (result.ok) {
    await ctx.store.complete(entry.entryId, message.id, { message, now: now(), status: result.status });
    if (message.workflowFailureOf !== undefined)
      await ctx.workflowEvents.failureCallbackMoved(message.workflowFailureOf.runId, 'CALLBACK_SUCCESS');
    // winston builds and filters a filtered-out line through its streams: asked first (ctx.debug),
    // a delivery spends nothing on it.
    if (ctx.debug) ctx.logger.debug('message delivered', { ...logFieldsOf(message), status: result.status });
    return 'delivered';
  }
  ctx.logger.warn('delivery failed', { ...logFieldsOf(message), status: result.status, error: result.error });
  return handleFailure(ctx, entry, message, result, now());
}

/**
 * Not async: the deliverer's promise is returned as it is, without one of its own and an await
 * around it per delivery. A throw here (signing) is the caller's try's, as a rejection would be.
 */
function attemptDelivery(ctx: ProcessEntryContext, message: QueueMessage): Promise<AttemptResult> {
  const signature = ctx.signer.sign({ destination: message.destination, body: message.body });
  const request: DeliveryRequest = {
    url: message.destination,
    method: message.method,
    headers: deliveryHeaders(message, signature),
    body: message.body,
    timeoutMs: message.timeoutMs ?? ctx.deliveryTimeoutMs,
  };
  // A failure callback reports the last answer whole too: the Workflow SDK's failureFunction
  // parses it as JSON (its error message and stack). Set, not spread: no empty object per delivery.
  if (message.callback || message.failureCallback) request.keepResponseBytes = ctx.maxCallbackBodyBytes;
  return ctx.deliverer(request);
}

async function handleFailure(
  ctx: ProcessEntryContext,
  entry: StreamEntry,
  message: QueueMessage,
  result: AttemptResult,
  now: number,
): Promise<EntryOutcome> {
  const nonRetryable =
    result.refused ||
    (result.status !== undefined && isNonRetryableResponse(result.status, result.nonRetryableHeader));
  const decision = decideAfterFailure({
    message,
    failure: { status: result.status, retryAfter: result.retryAfter, nonRetryable },
    options: ctx.policy,
    now,
  });
  if (message.workflowCall)
    await publishCallCallback(ctx.store, message, result, decision.action !== 'retry');
  if (decision.action === 'retry') {
    await ctx.store.scheduleRetry({
      entryId: entry.entryId,
      consumer: ctx.consumer,
      message: { ...message, retried: message.retried + 1 },
      dueAt: now + decision.delayMs,
      failure: {
        now,
        status: result.status,
        error: result.error,
        responseHeaders: result.responseHeaders,
        responseBody: result.responseBodyBytes,
      },
    });
    ctx.logger.info('delivery retry scheduled', {
      messageId: message.id,
      retried: message.retried + 1,
      delayMs: decision.delayMs,
    });
    return 'retry-scheduled';
  }
  const letter = buildDeadLetter({
    message,
    reason: result.refused ? 'destination-refused' : decision.reason,
    failedAt: now,
    lastStatus: result.status,
    lastError: result.error,
    lastResponseBody: result.responseBody,
    lastResponseHeaders: result.responseHeaders,
  });
  await publishFailureCallback(ctx.store, message, result, letter.dlqId);
  await ctx.store.deadLetter({
    entryId: entry.entryId,
    consumer: ctx.consumer,
    letter,
    limits: ctx.deadLetterLimits,
    now,
    message,
    responseBody: result.responseBodyBytes,
  });
  // After the dead letter is stored: a crash in between leaves the run running, as a redelivery would.
  if (message.workflow !== undefined)
    await ctx.workflowEvents.finishRun(message.workflow.runId, {
      state: 'RUN_FAILED',
      at: now,
      failure: JSON.stringify({
        dlqId: letter.dlqId,
        status: letter.lastStatus,
        error: letter.lastError,
        body: letter.lastResponseBody,
      }),
    });
  if (message.workflow !== undefined && message.failureCallback !== undefined)
    await ctx.workflowEvents.failureCallbackMoved(message.workflow.runId, 'CALLBACK_INPROGRESS', {
      published: true,
    });
  if (message.workflowFailureOf !== undefined)
    await ctx.workflowEvents.failureCallbackMoved(message.workflowFailureOf.runId, 'CALLBACK_FAIL', {
      dlqId: letter.dlqId,
    });
  ctx.logger.warn('message dead-lettered', {
    messageId: message.id,
    ...redactDestination(message.destination),
    reason: letter.reason,
    status: result.status,
    attempt: message.retried + 1,
  });
  return 'dead-lettered';
}
