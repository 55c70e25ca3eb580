/**
 * Every Redis key the queue uses in a tenant's database, named once. All keys share the configured
 * prefix, whose default `{settee-queue}:` is a hash tag: on a Redis Cluster they land in one slot,
 * so the multi-key Lua scripts stay legal.
 */
export interface QueueKeys {
  /** Stream of messages ready for delivery; each entry is one message (field `m`). */
  readonly stream: string;
  /**
   * Hash from message id to its stream entry id, for the messages on the stream: how
   * GET /v2/messages/{id} and a cancel find a queued message without scanning the stream.
   */
  readonly streamIndex: string;
  /**
   * Sorted set of the messages waiting for a due time, delayed (Upstash-Delay, Upstash-Not-Before)
   * or waiting for a retry: member = message id, score = due time (ms). Its Redis name is the one
   * it had when it held retries only, so retries parked by an older gateway still come due.
   */
  readonly schedule: string;
  /**
   * Hash of the messages waiting off the stream: field = message id, value = the encoded message.
   * Those in `schedule` wait for a due time; the others wait in a queue's list (`queueWaiting`)
   * for a slot. Either way the messages API finds and cancels them here.
   */
  readonly scheduledMessages: string;
  /** Hash of the queues (`/v2/queues`): field = queue name, value = its QueueRecord JSON. */
  readonly queues: string;
  /** List of a queue's messages waiting for a slot, oldest first: message ids (bodies in `scheduledMessages`). */
  queueWaiting(queue: string): string;
  /**
   * Set of the ids of a queue's messages that hold one of its `parallelism` slots: from the moment
   * they leave `queueWaiting` until delivered, dead-lettered or cancelled (a retry keeps its slot).
   */
  queueActive(queue: string): string;
  /**
   * Hash of the flow-control keys (Upstash-Flow-Control-Key): field = the key, value = its
   * FlowControlRecord JSON (limits, pinned and paused flags, the current rate window).
   */
  readonly flowControls: string;
  /** List of a flow-control key's messages waiting for a token or the rate window, oldest first (ids). */
  flowControlWaiting(key: string): string;
  /** Set of the ids of a flow-control key's messages being delivered: one parallelism token each. */
  flowControlActive(key: string): string;
  /**
   * Sorted set of a flow-control key's messages waiting for a due time (delayed, or a retry):
   * member = message id, score = due time (ms). Due ones join the waiting list, so they pass the
   * key's limits again; the bodies are in `scheduledMessages`.
   */
  flowControlDue(key: string): string;
  /** Hash of the dead-letter queue: field = dlqId, value = the dead letter (JSON). */
  readonly deadLetters: string;
  /** Hash of URL groups (QStash's topics): field = group name, value = `{createdAt, updatedAt, endpoints}` JSON. */
  readonly urlGroups: string;
  /** Hash of cron schedules: field = schedule id, value = its ScheduleRecord JSON. */
  readonly schedules: string;
  /** Hash of each schedule's message template: field = schedule id, value = an encoded message. */
  readonly scheduleMessages: string;
  /**
   * Sorted set of the schedules that will tick: member = schedule id, score = its next tick (ms),
   * or, while a replica holds the tick claimed, the claim (a time ahead, never a whole minute).
   * A paused schedule is not in it. Firing a tick moves the score on from the claim, in the same
   * script that stores the tick's message, so each tick fires once whichever replica claims it.
   */
  readonly scheduleTicks: string;
  /**
   * Hash of the schedules a replica holds claimed: field = schedule id, value = "<claim> <tick>"
   * (ms), the claim that replaced the tick in `scheduleTicks` and the tick it replaced, so a tick
   * claimed again after its claim ran out still fires as that tick (claim-schedule-ticks.ts).
   */
  readonly scheduleClaims: string;
  /** Hash of each schedule's last tick that fired: field = schedule id, value = epoch ms. */
  readonly scheduleLastTicks: string;
  /**
   * Hash of the messages of each schedule's last tick: field = schedule id, value = their ids
   * joined with commas (the answer's `lastScheduleStates`).
   */
  readonly scheduleLastMessages: string;
  /**
   * Sorted set of the dlqIds, every score 0, so members sort by name, and dlqIds begin with their
   * failure time: paging newest first, and trimming the oldest, are range reads, never a scan.
   */
  readonly deadLetterOrder: string;
  /**
   * Stream of the messages' events (field `e`, JSON): CREATED, ACTIVE, DELIVERED, ... Entry ids
   * are times, so pages and date filters are XREVRANGE bounds; capped by count as it is written
   * and trimmed by age (XTRIM MINID) in maintenance.
   */
  readonly events: string;
  /**
   * Sorted set of the consumers' heartbeats: member = consumer name, score = the Redis server's
   * time (ms) of its last heartbeat. A consumer whose heartbeat is older than the lease is dead.
   */
  readonly consumerHeartbeats: string;
  /**
   * Hash from deduplication key (`id:<Upstash-Deduplication-Id>` or `content:<hash>`) to the id of
   * the first message published under it, while its window lasts.
   */
  readonly deduplicationIds: string;
  /** Sorted set of the deduplication keys: member = key, score = when its window ends (ms). */
  readonly deduplicationExpiries: string;
  /**
   * String: the consumer that moves due messages onto the stream for every replica, set with an
   * expiry (PX) it renews as it moves: one mover per binding, another taking over once it lapses.
   */
  readonly moverLease: string;
  /**
   * Hash of one workflow run (workflow-run-store.ts): `config` (its WorkflowRunConfig JSON, set once by the
   * trigger), `state` (RUN_STARTED, RUN_SUCCESS, RUN_FAILED, RUN_CANCELED), `createdAt`,
   * `finishedAt`, `response` (what the run returned), `failure` (the last failed step's answer),
   * `contextBytes` and `repeatedSteps` (append-workflow-step.ts), and `wait:<timer id>` = event id
   * for each of its waiters (register-workflow-wait.ts; dropped when a notify or timeout takes it).
   */
  workflowRun(runId: string): string;
  /**
   * List of one workflow run's steps in the order they were published: each the raw step JSON the
   * SDK reads, `{messageId, body (base64), callType}`, with the publish time and step name beside.
   */
  workflowSteps(runId: string): string;
  /**
   * Set of the steps one workflow run has counted (append-workflow-step.ts), each by how the SDK's
   * parser tells steps apart (stepId; a parallel plan step's targetStep): a step published again
   * by a retried delivery joins the list but is not counted against the run's limits twice.
   */
  workflowStepIds(runId: string): string;
  /**
   * Sorted set of the workflow runs: member = run id, score = creation time (ms). The logs page
   * newest first by range reads.
   */
  readonly workflowRunOrder: string;
  /**
   * Hash of the runs waiting for one event (context.waitForEvent; workflow-event-store.ts): field =
   * `<runId>/<timer message id>`, value = the waiter's JSON. A notify reads only its event's
   * waiters, and takes each with one HDEL, so a notify and the wait's timeout never both resume it.
   */
  workflowWaiters(eventId: string): string;
  /**
   * Hash of the events notified to one run before it waited for them (`/v2/notify/{runId}/{eventId}`
   * with no waiter): field = event id, value = the event's data, taken by the run's next wait for it.
   */
  workflowNotices(runId: string): string;
  /**
   * Sorted set of the finished workflow runs: member = run id, score = finish time (ms). Retention
   * (limits.workflowRunRetention, maxWorkflowRuns) drops the earliest finished without a scan.
   */
  readonly workflowRunsFinished: string;
  /**
   * Hash of the binding's daily message count (spec.limits.maxMessagesPerDay): fields `window`
   * (the UTC day's number since the epoch) and `used`; it expires at the day's end.
   */
  readonly dailyMessages: string;
  /**
   * Hash of the binding's requests in the current second (spec.limits.maxRequestsPerSecond):
   * fields `window` (the second since the epoch) and `used`; it expires at the second's end.
   */
  readonly burstRequests: string;
}

/** The consumer group every gateway replica joins on a binding's stream. */
export const DELIVERY_GROUP = 'settee-delivery';
/** The stream entry field that holds the encoded message. */
export const MESSAGE_FIELD = 'm';
/** The events stream's entry field that holds an event (JSON). */
export const EVENT_FIELD = 'e';

export function queueKeys(prefix: string): QueueKeys {
  return Object.freeze({
    stream: `${prefix}messages`,
    urlGroups: `${prefix}url-groups`,
    schedules: `${prefix}schedules`,
    scheduleMessages: `${prefix}schedule-messages`,
    scheduleTicks: `${prefix}schedule-ticks`,
    scheduleClaims: `${prefix}schedule-claims`,
    scheduleLastTicks: `${prefix}schedule-last-ticks`,
    scheduleLastMessages: `${prefix}schedule-last-messages`,
    streamIndex: `${prefix}message-entries`,
    schedule: `${prefix}retry-schedule`,
    scheduledMessages: `${prefix}retry-messages`,
    deadLetters: `${prefix}dlq`,
    deadLetterOrder: `${prefix}dlq-order`,
    events: `${prefix}events`,
    consumerHeartbeats: `${prefix}consumer-heartbeats`,
    deduplicationIds: `${prefix}deduplication-ids`,
    deduplicationExpiries: `${prefix}deduplication-expiries`,
    moverLease: `${prefix}mover-lease`,
    queues: `${prefix}queues`,
    queueWaiting: (queue: string) => `${prefix}queue-waiting:${queue}`,
    queueActive: (queue: string) => `${prefix}queue-active:${queue}`,
    flowControls: `${prefix}flow-controls`,
    flowControlWaiting: (key: string) => `${prefix}flow-control-waiting:${key}`,
    flowControlActive: (key: string) => `${prefix}flow-control-active:${key}`,
    flowControlDue: (key: string) => `${prefix}flow-control-due:${key}`,
    workflowRun: (runId: string) => `${prefix}workflow-run:${runId}`,
    workflowSteps: (runId: string) => `${prefix}workflow-steps:${runId}`,
    workflowStepIds: (runId: string) => `${prefix}workflow-step-ids:${runId}`,
    workflowRunOrder: `${prefix}workflow-runs`,
    workflowWaiters: (eventId: string) => `${prefix}workflow-waiters:${eventId}`,
    workflowNotices: (runId: string) => `${prefix}workflow-notices:${runId}`,
    workflowRunsFinished: `${prefix}workflow-runs-finished`,
    dailyMessages: `${prefix}rate-daily-messages`,
    burstRequests: `${prefix}rate-burst-requests`,
  });
}
