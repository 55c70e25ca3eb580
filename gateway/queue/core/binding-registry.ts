/** What the gateway needs to serve one binding's queue: who may publish, where, and how to sign. */
export interface QueueTarget {
  /** `namespace/name` of the QueueBinding. */
  key: string;
  namespace: string;
  name: string;
  /** The database password: the bearer token and the Redis AUTH password. */
  token: string;
  /** VQUEUE_CURRENT_SIGNING_KEY: every delivery is signed with it. */
  signingKey: string;
  /**
   * VQUEUE_NEXT_SIGNING_KEY: the key that signs after the next rotation (GET /v2/keys answers
   * both). "" only while an operator older than the two-key model still writes the env Secret.
   */
  nextSigningKey: string;
  /**
   * status.signingKeys.rotationRequest: the value of the rotation annotation the operator last
   * acted on ("" before any), how POST /v2/keys/rotate sees its own request answered.
   */
  signingKeyRotation: string;
  /**
   * The rotation annotation's value ("" when unset): differing from `signingKeyRotation`, a
   * rotation is requested that the operator has not answered yet.
   */
  requestedSigningKeyRotation: string;
  connection: DatabaseConnection;
  limits: QueueLimits;
}

/**
 * The binding's effective limits (status.limits, as the operator resolved spec.limits against its
 * defaults), durations in milliseconds.
 */
export interface QueueLimits {
  /** Longest wait before a message's first delivery (limits.maxDelay). */
  maxDelayMs: number;
  /** Longest Upstash-Timeout of one attempt (limits.maxTimeout). */
  maxTimeoutMs: number;
  /** How long a deduplication key keeps duplicates out (limits.deduplicationWindow). */
  deduplicationWindowMs: number;
  /** How long dead letters are kept (limits.deadLetterRetention). */
  deadLetterRetentionMs: number;
  /** The most dead letters kept (limits.maxDeadLetters). */
  maxDeadLetters: number;
  /** How long events are kept (limits.eventRetention). */
  eventRetentionMs: number;
  /** The most events kept (limits.maxEvents). */
  maxEvents: number;
  /** How long a finished workflow run is kept (limits.workflowRunRetention). */
  workflowRunRetentionMs: number;
  /** The most finished workflow runs kept (limits.maxWorkflowRuns). */
  maxWorkflowRuns: number;
  /** The most steps of one workflow run (limits.maxWorkflowSteps). */
  maxWorkflowSteps: number;
  /** The largest context of one workflow run, bytes: payload and step bodies (limits.maxWorkflowContextBytes). */
  maxWorkflowContextBytes: number;
  /** The most queues (limits.maxQueues). */
  maxQueues: number;
  /** The largest parallelism of a queue (limits.maxQueueParallelism). */
  maxQueueParallelism: number;
  /** The most schedules (limits.maxSchedules). */
  maxSchedules: number;
  /** The most URL groups (limits.maxUrlGroups). */
  maxUrlGroups: number;
  /** The most endpoints of one URL group (limits.maxUrlGroupEndpoints). */
  maxUrlGroupEndpoints: number;
  /** New messages a UTC day, 0 for no limit (limits.maxMessagesPerDay). */
  maxMessagesPerDay: number;
  /** Requests a second, 0 for no limit (limits.maxRequestsPerSecond). */
  maxRequestsPerSecond: number;
}

export interface DatabaseConnection {
  host: string;
  port: number;
  tls: boolean;
  db: number;
}

export type RegistryEvent = { type: 'upsert'; target: QueueTarget } | { type: 'delete'; key: string };
export type RegistryListener = (event: RegistryEvent) => void;

export function queueTargetKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/**
 * The bindings this gateway serves, by `namespace/name`. Fed from the Kubernetes API by
 * kube-binding-source.ts (tests may fill it directly); the queue handler reads it on every request and the
 * delivery workers follow its changes.
 */
export class BindingRegistry {
  private readonly targets = new Map<string, QueueTarget>();
  private readonly listeners = new Set<RegistryListener>();

  get(namespace: string, name: string): QueueTarget | undefined {
    return this.targets.get(queueTargetKey(namespace, name));
  }

  list(): QueueTarget[] {
    return [...this.targets.values()];
  }

  set(target: QueueTarget): void {
    this.targets.set(
      target.key,
      Object.freeze({
        ...target,
        connection: Object.freeze({ ...target.connection }),
        limits: Object.freeze({ ...target.limits }),
      }),
    );
    this.emit({ type: 'upsert', target: this.targets.get(target.key)! });
  }

  delete(key: string): void {
    if (this.targets.delete(key)) this.emit({ type: 'delete', key });
  }

  /** Returns an unsubscribe. */
  subscribe(listener: RegistryListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: RegistryEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}
