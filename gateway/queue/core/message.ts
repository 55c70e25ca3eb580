import type { FlowControl } from './flow-control.js';
import { randomBase64Url } from './random-pool.js';
import type { RedactFields } from './redact-fields.js';

/**
 * The longest destination a per-destination cache keeps (publish's checked destinations, a
 * deliverer's targets): a publisher sends to a few short URLs over and over, and a cache bounded
 * only by its count would hold up to 8 KiB per entry for destinations sent to once.
 */
export const CACHED_DESTINATION_LENGTH = 2_048;

/** One message as the queue keeps it, from publish until it is delivered or dead-lettered. */
export interface QueueMessage {
  /** `msg_...`, returned to the publisher and sent as Upstash-Message-Id. */
  id: string;
  /** The destination URL exactly as published; also the signature's `sub`. */
  destination: string;
  /** Upstash-Method, default POST. */
  method: string;
  /** Sent with every delivery: the Upstash-Forward-* headers without their prefix, and Content-Type. */
  headers: Record<string, string>;
  /**
   * The client's spelling of the names in `headers` it did not send in lower case (`test-header`
   * -> `Test-Header`): QStash answers header names as the client sent them. Delivery, matching and
   * redaction use the lower-case names in `headers`.
   */
  headerNames?: Record<string, string>;
  body: Buffer;
  /** Retries allowed after the first attempt (Upstash-Retries). */
  retries: number;
  /** Upstash-Retry-Delay: an expression in `retried` giving milliseconds. */
  retryDelay?: string;
  /** Upstash-Timeout, in milliseconds; the configured delivery timeout when absent. */
  timeoutMs?: number;
  /** Retries made so far: 0 on the first attempt (Upstash-Retried). */
  retried: number;
  /** Publish time, epoch milliseconds. */
  createdAt: number;
  /** First delivery not before this time, epoch ms (Upstash-Delay, Upstash-Not-Before). */
  notBefore?: number;
  /**
   * The publisher's address (QStash's `callerIp`): the TCP peer, or the first X-Forwarded-For
   * address when the peer is a trusted proxy (SETTEE_GATEWAY_TRUSTED_PROXIES). A DLQ retry and a
   * schedule's ticks keep the address of whoever published the letter or created the schedule.
   */
  callerIp?: string;
  /** Upstash-Label: a name to find the message by in the messages, DLQ and events APIs. */
  label?: string;
  /** Upstash-Redact-Fields: what the APIs hide of this message. */
  redact?: RedactFields;
  /** The URL group it was published to, one message per endpoint; delivered as Upstash-Topic-Name. */
  topicName?: string;
  /** The name of the URL group endpoint it was fanned out to, when the endpoint has one. */
  endpointName?: string;
  /** The queue (`/v2/enqueue/{queue}`) it waits in for a slot, and whose slot it holds once started. */
  queueName?: string;
  /**
   * Upstash-Flow-Control-Key and -Value: it waits for its key's token and rate window before each
   * attempt (flow-control/).
   */
  flowControl?: FlowControl;
  /** The schedule whose tick created it; delivered as Upstash-Schedule-Id. */
  scheduleId?: string;
  /**
   * A callback (or failure callback) of a queue's message: that queue, one of whose slots it holds
   * until it is delivered or dead-lettered, since QStash's next queued message waits for the
   * callbacks of the one before. Not its queueName: it is not the queue's message in the APIs.
   */
  holdsSlotOf?: string;
  /** Upstash-Callback: every answer of the destination is published to it (callback-message.ts). */
  callback?: CallbackRequest;
  /** Upstash-Failure-Callback: published to once the message is dead-lettered. */
  failureCallback?: CallbackRequest;
  /** Upstash-Deduplication-Id (`id:...`) or the content hash (`content:...`) it was deduplicated by. */
  deduplicationKey?: string;
  /** A delivery of a workflow run (workflow-message.ts): its run, reported in its failure callback. */
  workflow?: WorkflowMessageInfo;
  /**
   * context.call's request (Upstash-Workflow-CallType: toCallback): its run waits for the callback,
   * so the attempt that ends it reports even without an answer (callback-publisher.ts).
   */
  workflowCall?: true;
  /**
   * The failure callback of a run's dead-lettered step: its delivery or its own dead letter is the
   * run's failure callback state (client.dlq's failureCallbackInfo, retryFailureFunction).
   */
  workflowFailureOf?: { runId: string };
  /**
   * The timer of a context.waitForEvent (workflow-event-store.ts): when due, the run's waiter, if
   * no notify took it first, resumes with a timed-out step. Never delivered itself.
   */
  workflowWait?: { eventId: string; field: string };
  /**
   * On the publish path only: the Upstash-Workflow-* headers it was published with, which
   * workflow-publish.ts turns into the stored message (never stored itself).
   */
  workflowPublish?: WorkflowPublish;
}

/** Where and how a callback message is sent: the Upstash-(Failure-)Callback-* headers of a publish. */
export interface CallbackRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  retries: number;
  retryDelay?: string;
  timeoutMs?: number;
  /** `<prefix>-Flow-Control-Key` and `-Value`: the callback waits for its key as a message does. */
  flowControl?: FlowControl;
}

/** The Upstash-Workflow-* headers of one publish (or batch item). */
export interface WorkflowPublish {
  /** Upstash-Workflow-RunId: `wfr_...`. */
  runId: string;
  /** Upstash-Workflow-Init: true starts the run (client.trigger, or a direct call of serve()). */
  init: boolean;
  /** Upstash-Workflow-Url: the serve() endpoint; every step of the run is delivered there. */
  url: string;
  /**
   * Upstash-Workflow-CallType: `toCallback` for context.call (the destination is the called URL,
   * the answer comes back through Upstash-Callback); absent or `step` for a step of the run.
   */
  callType?: string;
  /** Upstash-Workflow-Invoke: true on a trigger: context.invoke, whose body wraps the payload (workflow-invoke.ts). */
  invoke?: true;
}

/** What a stored message of a run carries beside its body (message.ts `workflow`). */
export interface WorkflowMessageInfo {
  runId: string;
  /** The run's creation time, ms: sent as Upstash-Workflow-CreatedAt and in the failure callback. */
  createdAt: number;
  /**
   * The run's initial payload, base64: a failure callback reports it as `sourceBody`, which the
   * SDK's failureFunction parses as the run's payload. Kept only on messages with a failure callback.
   */
  initialBody?: string;
}

/** What a publisher asks for; the queue adds id, retried and createdAt. */
export type MessageRequest = Omit<QueueMessage, 'id' | 'retried' | 'createdAt'>;

const ID_BYTES = 18;

export function newMessageId(): string {
  return `msg_${randomBase64Url(ID_BYTES)}`;
}

export function createMessage(request: MessageRequest, now = Date.now()): QueueMessage {
  // Every message is made here. Object.assign, not `{ ...request, id, ... }`: on Node 20 a spread
  // followed by more properties costs about 3 us against 0.2 (docs/queue.md, Performance).
  return Object.assign({}, request, { id: newMessageId(), retried: 0, createdAt: now });
}

/** The queue one of whose slots the message holds once started: its own, or, for a callback, its source's. */
export function slotQueueOf(message: QueueMessage): string | undefined {
  return message.queueName ?? message.holdsSlotOf;
}
