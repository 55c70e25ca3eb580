import { QSTASH_DURATION_PATTERN } from './qstash-duration.js';
import { array, boolean, integer, object, string, stringEnum } from './crd-schema.js';
import { QUEUE_PLAN_LIMITS, QUEUE_PLANS } from './queue-plans.js';

/**
 * The OpenAPI v3 schema of QueueBinding: the CRD's structural schema (crds/queuebinding.yaml is
 * rendered from it), the source of its TypeScript types (queue-binding.ts) and of docs/crds.md.
 */

/** The engines that have a queue; the CRD's enum rejects every other one. */
export const QUEUE_ENGINES = ['valkey', 'redis'] as const;

export const DEFAULT_DATABASE_PORT = 6379;
/** QStash's free plan's longest delay: the limit of a binding whose status has none yet. */
export const DEFAULT_MAX_DELAY = QUEUE_PLAN_LIMITS.free.maxDelay;
/** QStash keeps dead letters for 7 days on its paid plans. */
export const DEFAULT_DEAD_LETTER_RETENTION = '7d';
/** QStash keeps logs for 3 days on its paid plans. */
export const DEFAULT_EVENT_RETENTION = '3d';
export const DEFAULT_MAX_EVENTS = 100_000;
/** Finished workflow runs are QStash's workflow logs (client.logs()): kept as long as its logs. */
export const DEFAULT_WORKFLOW_RUN_RETENTION = DEFAULT_EVENT_RETENTION;
export const DEFAULT_MAX_WORKFLOW_RUNS = 10_000;
/** Upstash Workflow's hard limits per run ("Avoid Context and Step Limits"): 1,000 steps, 100 MB. */
export const DEFAULT_MAX_WORKFLOW_STEPS = 1_000;
export const DEFAULT_MAX_WORKFLOW_CONTEXT_BYTES = 100 * 1024 * 1024;
/** Duplicates of a message are kept out for this long after it was published. */
export const DEFAULT_DEDUPLICATION_WINDOW = '10m';

const duration = (options: { default: string; description: string }) =>
  string({ pattern: QSTASH_DURATION_PATTERN, ...options });

export const SECRET_KEY_REF_SCHEMA = object({
  description:
    "The Secret key holding the database password, in the binding's namespace. The password is also " +
    'the queue token (VQUEUE_TOKEN) that publishers send as "Authorization: Bearer <token>".',
  required: ['name', 'key'],
  properties: {
    name: string({ minLength: 1, description: 'Name of the Secret.' }),
    key: string({ minLength: 1, description: "Key within the Secret's data." }),
  },
});

export const QUEUE_BINDING_CONNECTION_SCHEMA = object({
  description:
    'How the operator and the gateway reach the database. The database must be Redis 6.2 or newer, or ' +
    'Valkey (the queue uses Redis Streams and XAUTOCLAIM).',
  required: ['host', 'passwordSecretRef'],
  properties: {
    host: string({ minLength: 1, maxLength: 253, description: 'Host name or IP address of the database.' }),
    port: integer({
      minimum: 1,
      maximum: 65535,
      default: DEFAULT_DATABASE_PORT,
      description: `TCP port of the database (default ${DEFAULT_DATABASE_PORT}).`,
    }),
    tls: boolean({
      default: false,
      description: 'Connect with TLS, verifying the server certificate against the host name.',
    }),
    db: integer({
      minimum: 0,
      maximum: 1023,
      default: 0,
      description: 'Database index selected after connecting (default 0).',
    }),
    passwordSecretRef: SECRET_KEY_REF_SCHEMA,
  },
});

export const QUEUE_BINDING_LIMITS_SCHEMA = object({
  description:
    "Limits the gateway applies to this binding's queue; a field left out takes spec.plan's figure, or the " +
    "operator's default without a plan. status.limits shows every limit in force.",
  properties: {
    maxDelay: string({
      pattern: QSTASH_DURATION_PATTERN,
      description:
        'The longest a message may wait before its first delivery, through Upstash-Delay or ' +
        'Upstash-Not-Before, as a duration such as 7d, 36h or 90m (plan free 7d, paid 365d). A publish ' +
        'asking for longer is refused with a 400 that names this field.',
    }),
    maxTimeout: string({
      pattern: QSTASH_DURATION_PATTERN,
      description:
        'The longest Upstash-Timeout (and Upstash-Callback-Timeout) of one delivery attempt, as a duration ' +
        'such as 15m or 2h (plan free 15m, paid 2h). A publish asking for longer is refused with a 400 that ' +
        "names this field. An attempt without Upstash-Timeout waits the gateway's SETTEE_QUEUE_DELIVERY_TIMEOUT_MS " +
        '(30s), or this limit when it is shorter.',
    }),
    deduplicationWindow: duration({
      default: DEFAULT_DEDUPLICATION_WINDOW,
      description:
        'How long a message published with Upstash-Deduplication-Id or Upstash-Content-Based-Deduplication ' +
        'keeps its duplicates out, as a duration such as 10m or 1h (default 10m). A duplicate within the ' +
        "window is answered with the first message's id and not delivered again.",
    }),
    deadLetterRetention: duration({
      default: DEFAULT_DEAD_LETTER_RETENTION,
      description:
        'How long a dead letter (a message out of retries) stays in the dead-letter queue (GET /v2/dlq), ' +
        'as a duration such as 7d or 36h (default 7d). Older ones are dropped.',
    }),
    maxDeadLetters: integer({
      minimum: 1,
      maximum: 1_000_000,
      description:
        "The most dead letters kept; the oldest go first. Default: the operator's " +
        'SETTEE_QUEUE_MAX_DEAD_LETTERS (Helm queue.maxDeadLetters, 10000); status.limits shows the value in force.',
    }),
    eventRetention: duration({
      default: DEFAULT_EVENT_RETENTION,
      description:
        "How long the messages' events (GET /v2/events, the SDK's logs()) are kept, as a duration such as " +
        '3d or 12h (default 3d).',
    }),
    maxEvents: integer({
      minimum: 1000,
      maximum: 10_000_000,
      default: DEFAULT_MAX_EVENTS,
      description:
        'The most events kept (about, the stream is trimmed in whole nodes); the oldest go first (default 100000).',
    }),
    workflowRunRetention: duration({
      default: DEFAULT_WORKFLOW_RUN_RETENTION,
      description:
        'How long a finished workflow run (succeeded, failed or cancelled) is kept with its steps for ' +
        'client.logs() and the console, from its end, as a duration such as 3d or 12h (default 3d). Running ' +
        'runs are never dropped.',
    }),
    maxWorkflowRuns: integer({
      minimum: 100,
      maximum: 10_000_000,
      default: DEFAULT_MAX_WORKFLOW_RUNS,
      description:
        'The most finished workflow runs kept; the earliest finished go first (default 10000). Running runs ' +
        'do not count.',
    }),
    maxWorkflowSteps: integer({
      minimum: 1,
      maximum: 100_000,
      default: DEFAULT_MAX_WORKFLOW_STEPS,
      description:
        "The most steps one workflow run takes (each step's publish, a parallel group's plan steps " +
        "included); one more is refused with 412, which fails the run (default 1000, Upstash Workflow's " +
        'hard limit).',
    }),
    maxWorkflowContextBytes: integer({
      minimum: 1024,
      maximum: 10 * 1024 * 1024 * 1024,
      default: DEFAULT_MAX_WORKFLOW_CONTEXT_BYTES,
      description:
        "The largest context of one workflow run, in bytes: its payload and every step's body; a step that " +
        "would pass it is refused with 412, which fails the run (default 104857600, Upstash Workflow's " +
        '100 MB hard limit).',
    }),
    maxQueues: integer({
      minimum: 1,
      maximum: 100_000,
      description:
        "The most queues (POST /v2/queues, /v2/enqueue); one more is refused with 412. Default: the operator's " +
        "SETTEE_QUEUE_MAX_QUEUES (Helm queue.maxQueues; 10, QStash's free plan); status.limits shows the value in force.",
    }),
    maxQueueParallelism: integer({
      minimum: 1,
      maximum: 10_000,
      description:
        "The largest parallelism of one queue; a larger one is a 400 naming parallelism. Default: the operator's " +
        'SETTEE_QUEUE_MAX_QUEUE_PARALLELISM (Helm queue.maxQueueParallelism, 100); status.limits shows the value in force.',
    }),
    maxSchedules: integer({
      minimum: 1,
      maximum: 1_000_000,
      description:
        "The most active schedules (POST /v2/schedules; paused ones do not count, as in QStash's plans); one " +
        "more, or a resume past it, is refused with 412. Default: the operator's SETTEE_QUEUE_MAX_SCHEDULES (Helm " +
        "queue.maxSchedules; 10, QStash's free plan); status.limits shows the value in force.",
    }),
    maxUrlGroups: integer({
      minimum: 1,
      maximum: 100_000,
      description:
        'The most URL groups (POST /v2/topics/{name}/endpoints); one more is refused with 412. Default: the ' +
        "operator's SETTEE_QUEUE_MAX_URL_GROUPS (Helm queue.maxUrlGroups; 1, QStash's free plan); status.limits " +
        'shows the value in force.',
    }),
    maxUrlGroupEndpoints: integer({
      minimum: 1,
      maximum: 1000,
      description:
        'The most endpoints of one URL group; adding more is refused with 412 and nothing is added. Default: ' +
        "the operator's SETTEE_QUEUE_MAX_URL_GROUP_ENDPOINTS (Helm queue.maxUrlGroupEndpoints; 100, QStash's " +
        'free plan); status.limits shows the value in force.',
    }),
    maxMessagesPerDay: integer({
      minimum: 0,
      maximum: 1_000_000_000,
      description:
        'New messages a UTC day (publish, enqueue, batch; one per URL group endpoint); a request whose messages ' +
        'do not all fit is refused with 429 and RateLimit-Limit/-Remaining/-Reset and Retry-After, and nothing ' +
        "is stored. 0 is none. Default: spec.plan's figure (free: 1000, QStash's free plan; paid: none), none " +
        'without a plan.',
    }),
    maxRequestsPerSecond: integer({
      minimum: 0,
      maximum: 1_000_000,
      description:
        "Requests a second to the binding's API, every route; one more is refused with 429 and " +
        'Burst-RateLimit-Limit/-Remaining/-Reset and Retry-After. 0 is none. Default: none on every plan ' +
        '(QStash publishes no per-second figure for its current plans).',
    }),
  },
});

export const QUEUE_BINDING_SPEC_SCHEMA = object({
  description: 'The database that gets the queue, and how to reach it.',
  required: ['engine', 'connection'],
  properties: {
    engine: stringEnum(QUEUE_ENGINES, {
      description:
        'The database engine: valkey or redis. Only these engines have a queue; any other value is rejected.',
    }),
    connection: QUEUE_BINDING_CONNECTION_SCHEMA,
    plan: stringEnum(QUEUE_PLANS, {
      description:
        "QStash's plan whose published limits this binding gets, free or paid (max delay, timeout, queues, " +
        'parallelism, schedules, URL groups and their endpoints; the table is in docs/queue.md, "Plans"). ' +
        "spec.limits overrides single figures. Without a plan, the operator's defaults apply (QStash's free plan " +
        'unless its SETTEE_QUEUE_MAX_* settings say otherwise).',
    }),
    limits: QUEUE_BINDING_LIMITS_SCHEMA,
  },
});

export const SIGNING_KEY_STATUS_SCHEMA = object({
  description:
    'Where the signing keys stand, as in QStash: a current key that signs and a next key, both always set. ' +
    'Set the settee.dev/rotate-signing-keys annotation to a new value (or POST <queueUrl>/v2/keys/rotate) to ' +
    'rotate: the next key becomes current and a new next key is derived. The keys themselves are derived ' +
    "from the operator's master secret, the binding's uid and these generation numbers.",
  required: ['currentGeneration'],
  properties: {
    currentGeneration: integer({
      minimum: 0,
      description:
        'Generation of the current signing key (VQUEUE_CURRENT_SIGNING_KEY), which signs every delivery.',
    }),
    nextGeneration: integer({
      minimum: 0,
      description:
        'Generation of the next signing key (VQUEUE_NEXT_SIGNING_KEY), always currentGeneration + 1. Absent ' +
        'only in status written by an operator older than the two-key model; the next reconcile adds it.',
    }),
    promoteAfter: string({
      format: 'date-time',
      description:
        'Only on a rotation started by an older operator, which waited a grace period: when that rotation ' +
        'completes. The operator no longer writes it.',
    }),
    rotationRequest: string({
      description:
        'The value of the settee.dev/rotate-signing-keys annotation that the last rotation answered.',
    }),
  },
});

/** status.limits: every field of spec.limits, as resolved; `limit(field, words)` describes one. */
const limit = (field: string, words: string) => `${words} (spec.limits.${field}).`;

export const QUEUE_BINDING_STATUS_LIMITS_SCHEMA = object({
  description:
    "Every limit of this binding's queue as the gateway enforces it: spec.limits where set, else spec.plan's " +
    "figure, else the operator's defaults (SETTEE_QUEUE_MAX_* on the operator, Helm queue.*). Every gateway " +
    'replica reads the same values here.',
  properties: {
    maxDelay: string({ description: limit('maxDelay', "Longest wait before a message's first delivery") }),
    maxTimeout: string({
      description: limit('maxTimeout', 'Longest Upstash-Timeout of one delivery attempt'),
    }),
    deduplicationWindow: string({
      description: limit('deduplicationWindow', 'How long duplicates are kept out'),
    }),
    deadLetterRetention: string({
      description: limit('deadLetterRetention', 'How long a dead letter is kept'),
    }),
    maxDeadLetters: integer({ description: limit('maxDeadLetters', 'The most dead letters kept') }),
    eventRetention: string({ description: limit('eventRetention', 'How long events are kept') }),
    maxEvents: integer({ description: limit('maxEvents', 'About the most events kept') }),
    workflowRunRetention: string({
      description: limit('workflowRunRetention', 'How long a finished workflow run is kept'),
    }),
    maxWorkflowRuns: integer({
      description: limit('maxWorkflowRuns', 'The most finished workflow runs kept'),
    }),
    maxWorkflowSteps: integer({
      description: limit('maxWorkflowSteps', 'The most steps of one workflow run; one more is a 412'),
    }),
    maxWorkflowContextBytes: integer({
      description: limit(
        'maxWorkflowContextBytes',
        "The largest workflow run's context, bytes; more is a 412",
      ),
    }),
    maxQueues: integer({ description: limit('maxQueues', 'The most queues; one more is a 412') }),
    maxQueueParallelism: integer({
      description: limit('maxQueueParallelism', 'The largest parallelism of one queue; more is a 412'),
    }),
    maxSchedules: integer({ description: limit('maxSchedules', 'The most schedules; one more is a 412') }),
    maxUrlGroups: integer({ description: limit('maxUrlGroups', 'The most URL groups; one more is a 412') }),
    maxUrlGroupEndpoints: integer({
      description: limit('maxUrlGroupEndpoints', 'The most endpoints of one URL group; more is a 412'),
    }),
    maxMessagesPerDay: integer({
      description: limit('maxMessagesPerDay', 'New messages a UTC day, 0 for none; more is a 429'),
    }),
    maxRequestsPerSecond: integer({
      description: limit('maxRequestsPerSecond', 'Requests a second, 0 for none; more is a 429'),
    }),
  },
});

export const QUEUE_BINDING_SERVER_SCHEMA = object({
  description:
    "The server the database runs, from its INFO server on the operator's last successful check: Valkey " +
    'says so (server_name:valkey, valkey_version), Redis does not. It may differ from spec.engine, which is ' +
    'what the binding declares; the queue works the same on both (docs/queue.md says where they differ).',
  required: ['engine', 'version'],
  properties: {
    engine: stringEnum(QUEUE_ENGINES, { description: 'valkey or redis, as the server reports itself.' }),
    version: string({
      description: "The server's own version: valkey_version on Valkey, redis_version on Redis.",
    }),
  },
});

export const QUEUE_BINDING_CONDITION_SCHEMA = object({
  description: 'A condition in the shape of metav1.Condition.',
  required: ['type', 'status', 'reason', 'message', 'lastTransitionTime'],
  properties: {
    type: string({ description: 'Ready or DatabaseReachable.' }),
    status: stringEnum(['True', 'False', 'Unknown'], { description: 'True, False or Unknown.' }),
    reason: string({ description: 'A PascalCase reason for the status.' }),
    message: string({ description: 'A message for people.' }),
    lastTransitionTime: string({ format: 'date-time', description: 'When the status last changed.' }),
    observedGeneration: integer({
      format: 'int64',
      description: 'The metadata.generation the condition was computed from.',
    }),
  },
});

export const QUEUE_BINDING_STATUS_SCHEMA = object({
  description: 'What the operator observed and wrote.',
  properties: {
    queueUrl: string({
      description:
        "The queue's base URL (VQUEUE_URL): publish with POST <queueUrl>/v2/publish/<destination> or " +
        'POST <queueUrl>/v2/batch.',
    }),
    envSecret: string({
      description:
        'Name of the Secret with exactly the keys VQUEUE_URL, VQUEUE_TOKEN, VQUEUE_QSTASH_TOKEN (the same ' +
        'token in QStash\'s format, base64 of {"UserID": "<namespace>.<name>", "Password": <token>}: give ' +
        'it to the workflow SDK, whose context.createWebhook needs it), VQUEUE_CURRENT_SIGNING_KEY (signs ' +
        'every delivery) and VQUEUE_NEXT_SIGNING_KEY (the key that signs after the next rotation); verify ' +
        "deliveries with both, as the QStash SDK's Receiver does.",
    }),
    signingKeys: SIGNING_KEY_STATUS_SCHEMA,
    server: QUEUE_BINDING_SERVER_SCHEMA,
    limits: QUEUE_BINDING_STATUS_LIMITS_SCHEMA,
    observedGeneration: integer({
      format: 'int64',
      description: 'The metadata.generation the status was computed from.',
    }),
    conditions: array(QUEUE_BINDING_CONDITION_SCHEMA, {
      description:
        'Ready (the env Secret is written and the database answered) and DatabaseReachable (the operator ' +
        'connected and authenticated).',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    }),
  },
});
