import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { SETTEE_API_VERSION } from './contract.js';
import { QUEUE_PATH_PREFIX, SETTEE_GROUP } from './contract.js';
import type { Condition } from './conditions.js';

/**
 * QueueBinding: the webhook queue of one tenant's Valkey or Redis database. The operator derives
 * its signing keys and writes the env Secret; the gateway serves the queue API under `queueUrl`
 * and keeps the messages in that same database (see docs/queue.md).
 */

export const QUEUE_BINDING_KIND = 'QueueBinding';
export const QUEUE_BINDING_PLURAL = 'queuebindings';
export const QUEUE_BINDING_SINGULAR = 'queuebinding';
export const QUEUE_BINDING_SHORT_NAME = 'qb';
export const QUEUE_BINDING_CRD_NAME = `${QUEUE_BINDING_PLURAL}.${SETTEE_GROUP}`;

/** The engines that have a queue; the CRD's enum rejects every other one. */
export const QUEUE_ENGINES = ['valkey', 'redis'] as const;
export type QueueEngine = (typeof QUEUE_ENGINES)[number];

export const DEFAULT_DATABASE_PORT = 6379;

export interface SecretKeyRef {
  name: string;
  key: string;
}

export interface QueueBindingConnection {
  host: string;
  /** Default {@link DEFAULT_DATABASE_PORT} (defaulted by the API server). */
  port?: number;
  tls?: boolean;
  /** Database index for SELECT; default 0. */
  db?: number;
  /** The database password: also the queue's bearer token (VQUEUE_TOKEN). */
  passwordSecretRef: SecretKeyRef;
}

/**
 * Limits the gateway applies to the binding's queue. A field left out takes the operator's
 * default (queue-limits.ts); status.limits shows every field as resolved.
 */
export interface QueueBindingLimits {
  /**
   * The longest a message may wait before its first delivery (Upstash-Delay, Upstash-Not-Before),
   * as a QStash duration such as `7d` or `36h`; default {@link DEFAULT_MAX_DELAY}.
   */
  maxDelay?: string;
  /**
   * How long a publish with Upstash-Deduplication-Id or Upstash-Content-Based-Deduplication
   * keeps later duplicates out, as a QStash duration; default {@link DEFAULT_DEDUPLICATION_WINDOW}.
   */
  deduplicationWindow?: string;
  /** How long a dead letter is kept, as a QStash duration; default {@link DEFAULT_DEAD_LETTER_RETENTION}. */
  deadLetterRetention?: string;
  /** The most dead letters kept; default the operator's SETTEE_QUEUE_MAX_DEAD_LETTERS. */
  maxDeadLetters?: number;
  /** How long events are kept, as a QStash duration; default {@link DEFAULT_EVENT_RETENTION}. */
  eventRetention?: string;
  /** The most events kept; default {@link DEFAULT_MAX_EVENTS}. */
  maxEvents?: number;
  /** The most queues (`/v2/queues`); default the operator's SETTEE_QUEUE_MAX_QUEUES. */
  maxQueues?: number;
  /** The largest parallelism of one queue; default the operator's SETTEE_QUEUE_MAX_QUEUE_PARALLELISM. */
  maxQueueParallelism?: number;
  /** The most active (unpaused) schedules (`/v2/schedules`); default the operator's SETTEE_QUEUE_MAX_SCHEDULES. */
  maxSchedules?: number;
  /** The most URL groups (`/v2/topics`); default the operator's SETTEE_QUEUE_MAX_URL_GROUPS. */
  maxUrlGroups?: number;
  /** The most endpoints of one URL group; default the operator's SETTEE_QUEUE_MAX_URL_GROUP_ENDPOINTS. */
  maxUrlGroupEndpoints?: number;
}

export interface QueueBindingSpec {
  engine: QueueEngine;
  connection: QueueBindingConnection;
  limits?: QueueBindingLimits;
}

/** QStash's own longest delay on its paid plans. */
export const DEFAULT_MAX_DELAY = '7d';
/** QStash keeps dead letters for 7 days on its paid plans. */
export const DEFAULT_DEAD_LETTER_RETENTION = '7d';
/** QStash keeps logs for 3 days on its paid plans. */
export const DEFAULT_EVENT_RETENTION = '3d';
export const DEFAULT_MAX_EVENTS = 100_000;

/** Duplicates of a message are kept out for this long after it was published. */
export const DEFAULT_DEDUPLICATION_WINDOW = '10m';

/**
 * Where the signing keys stand. Keys are never stored: each one is derived from the operator's
 * master secret, the binding's uid and a generation number, so only the numbers are kept. As in
 * QStash there are always two keys: deliveries are signed with the current one, receivers verify
 * with either, and a rotation makes the next key current and derives a new next.
 */
export interface SigningKeyStatus {
  /** Generation of VQUEUE_CURRENT_SIGNING_KEY, the key deliveries are signed with. */
  currentGeneration: number;
  /**
   * Generation of VQUEUE_NEXT_SIGNING_KEY: always currentGeneration + 1. Absent only in a status
   * written by an operator older than the two-key model, which the next pass upgrades.
   */
  nextGeneration?: number;
  /**
   * Only on a rotation that an older operator started with a grace period: when it completes
   * (the next key becomes current and a new next is derived). Never written by this operator.
   */
  promoteAfter?: string;
  /** The value of ANNOTATION_ROTATE_SIGNING_KEYS that the last rotation answered. */
  rotationRequest?: string;
}

export interface QueueBindingStatus {
  queueUrl?: string;
  /** Name of the Secret with exactly VQUEUE_URL, VQUEUE_TOKEN, VQUEUE_CURRENT_SIGNING_KEY, VQUEUE_NEXT_SIGNING_KEY. */
  envSecret?: string;
  signingKeys?: SigningKeyStatus;
  /**
   * Every limit as the gateway enforces it: spec.limits where set, the operator's defaults
   * otherwise (the same shape as spec.limits, with every field present).
   */
  limits?: Required<QueueBindingLimits>;
  observedGeneration?: number;
  conditions?: Condition[];
}

export interface QueueBinding {
  apiVersion: typeof SETTEE_API_VERSION;
  kind: typeof QUEUE_BINDING_KIND;
  metadata: V1ObjectMeta;
  spec: QueueBindingSpec;
  status?: QueueBindingStatus;
}

export const QueueBindingConditionType = {
  /** The env Secret is written and the database answered: the queue can be used. */
  Ready: 'Ready',
  /** The operator could connect to the database and authenticate with the password. */
  DatabaseReachable: 'DatabaseReachable',
} as const;
export type QueueBindingConditionType =
  (typeof QueueBindingConditionType)[keyof typeof QueueBindingConditionType];

export const QueueBindingReason = {
  Reachable: 'Reachable',
  Unreachable: 'Unreachable',
  AuthenticationFailed: 'AuthenticationFailed',
  UnsupportedVersion: 'UnsupportedVersion',
  PasswordSecretMissing: 'PasswordSecretMissing',
  PasswordKeyMissing: 'PasswordKeyMissing',
  /** The operator has no master secret to derive signing keys from. */
  SigningSecretMissing: 'SigningSecretMissing',
  QueueReady: 'QueueReady',
  DatabaseNotReachable: 'DatabaseNotReachable',
} as const;
export type QueueBindingReason = (typeof QueueBindingReason)[keyof typeof QueueBindingReason];

/** Reasons of the Kubernetes Events the QueueBinding controller records. */
export const QueueBindingEventReason = {
  EnvSecretCreated: 'EnvSecretCreated',
  DatabaseReachable: 'DatabaseReachable',
  DatabaseUnreachable: 'DatabaseUnreachable',
  SigningKeyRotated: 'SigningKeyRotated',
  /** A binding from before the two-key model got its next key (VQUEUE_NEXT_SIGNING_KEY). */
  NextSigningKeyPublished: 'NextSigningKeyPublished',
  SigningSecretMissing: 'SigningSecretMissing',
} as const;
export type QueueBindingEventReason = (typeof QueueBindingEventReason)[keyof typeof QueueBindingEventReason];

/**
 * Set to any new value (a timestamp, say) to rotate the signing keys as QStash does: the next key
 * becomes VQUEUE_CURRENT_SIGNING_KEY (deliveries are signed with it from then on) and a new next
 * key is derived as VQUEUE_NEXT_SIGNING_KEY. A receiver still holding the previous pair verifies
 * the new deliveries with its next key. POST /v2/keys/rotate sets this same annotation.
 */
export const ANNOTATION_ROTATE_SIGNING_KEYS = 'settee.dev/rotate-signing-keys';
/** On the env Secret: the binding it belongs to (the gateway's Secret informer selects on it). */
export const LABEL_QUEUE_BINDING = 'settee.dev/queue-binding';
export const COMPONENT_QUEUE = 'queue';

/** The keys of the env Secret, exactly these four. */
export const QueueEnvKey = {
  Url: 'VQUEUE_URL',
  Token: 'VQUEUE_TOKEN',
  CurrentSigningKey: 'VQUEUE_CURRENT_SIGNING_KEY',
  NextSigningKey: 'VQUEUE_NEXT_SIGNING_KEY',
} as const;
export type QueueEnvKey = (typeof QueueEnvKey)[keyof typeof QueueEnvKey];
export type QueueEnv = Record<QueueEnvKey, string>;

export function queueEnvSecretName(binding: string): string {
  return `${binding}-vqueue`;
}

/**
 * The queue's base URL (VQUEUE_URL): `<gateway base>/queue/<namespace>/<binding name>`. The SDK
 * appends `/v2/publish/...` and `/v2/batch` to it.
 */
export function renderQueueUrl(gatewayBaseUrl: string, ref: { namespace: string; name: string }): string {
  const base = gatewayBaseUrl.replace(/\/+$/, '');
  return `${base}${QUEUE_PATH_PREFIX}/${encodeURIComponent(ref.namespace)}/${encodeURIComponent(ref.name)}`;
}
