import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { SETTEE_API_VERSION } from './contract.js';
import { QUEUE_PATH_PREFIX } from './contract.js';
import type { Infer } from './crd-schema.js';
import type {
  QUEUE_BINDING_CONNECTION_SCHEMA,
  QUEUE_BINDING_LIMITS_SCHEMA,
  QUEUE_BINDING_SERVER_SCHEMA,
  QUEUE_BINDING_SPEC_SCHEMA,
  QUEUE_BINDING_STATUS_LIMITS_SCHEMA,
  QUEUE_BINDING_STATUS_SCHEMA,
  QUEUE_ENGINES,
  SECRET_KEY_REF_SCHEMA,
  SIGNING_KEY_STATUS_SCHEMA,
} from './queue-binding-schema.js';

/**
 * QueueBinding: the webhook queue of one tenant's Valkey or Redis database. The operator derives
 * its signing keys and writes the env Secret; the gateway serves the queue API under `queueUrl`
 * and keeps the messages in that same database (see docs/queue.md).
 */

export const QUEUE_BINDING_KIND = 'QueueBinding';
export const QUEUE_BINDING_PLURAL = 'queuebindings';
export const QUEUE_BINDING_SINGULAR = 'queuebinding';
export const QUEUE_BINDING_SHORT_NAME = 'qb';

export {
  DEFAULT_DATABASE_PORT,
  DEFAULT_DEAD_LETTER_RETENTION,
  DEFAULT_DEDUPLICATION_WINDOW,
  DEFAULT_EVENT_RETENTION,
  DEFAULT_MAX_DELAY,
  DEFAULT_MAX_EVENTS,
  DEFAULT_MAX_WORKFLOW_CONTEXT_BYTES,
  DEFAULT_MAX_WORKFLOW_RUNS,
  DEFAULT_MAX_WORKFLOW_STEPS,
  DEFAULT_WORKFLOW_RUN_RETENTION,
  QUEUE_ENGINES,
} from './queue-binding-schema.js';

// The types are those of the CRD's schema (queue-binding-schema.ts): a field cannot be in one and
// missing from the other, and its words are in the schema's descriptions (kubectl explain qb.spec).
export type QueueEngine = (typeof QUEUE_ENGINES)[number];
export type SecretKeyRef = Infer<typeof SECRET_KEY_REF_SCHEMA>;
/** status.server: what the database's INFO server says it is. */
export type QueueBindingServer = Infer<typeof QUEUE_BINDING_SERVER_SCHEMA>;
export type QueueBindingConnection = Infer<typeof QUEUE_BINDING_CONNECTION_SCHEMA>;
/** A field left out takes the operator's default (queue-limits.ts); status.limits shows them resolved. */
export type QueueBindingLimits = Infer<typeof QUEUE_BINDING_LIMITS_SCHEMA>;
export type QueueBindingSpec = Infer<typeof QUEUE_BINDING_SPEC_SCHEMA>;
/**
 * Keys are never stored: each one is derived from the operator's master secret, the binding's uid
 * and a generation number, so only the numbers are kept.
 */
export type SigningKeyStatus = Infer<typeof SIGNING_KEY_STATUS_SCHEMA>;
/**
 * The schema's status, except that this operator always writes every limit in status.limits (the
 * schema's own status.limits fields are optional, so the API server keeps what older operators wrote).
 */
export type QueueBindingStatus = Omit<Infer<typeof QUEUE_BINDING_STATUS_SCHEMA>, 'limits'> & {
  limits?: Required<Infer<typeof QUEUE_BINDING_STATUS_LIMITS_SCHEMA>>;
};

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

/** The keys of the env Secret, exactly these five. */
export const QueueEnvKey = {
  Url: 'VQUEUE_URL',
  Token: 'VQUEUE_TOKEN',
  /**
   * The same token in QStash's format (base64 of `{"UserID": "<namespace>.<name>", "Password":
   * <token>}`), taken wherever the plain one is: the workflow SDK's `context.createWebhook` reads
   * the binding's user id from it to build the webhook URL, and fails with any other token.
   */
  QStashToken: 'VQUEUE_QSTASH_TOKEN',
  CurrentSigningKey: 'VQUEUE_CURRENT_SIGNING_KEY',
  NextSigningKey: 'VQUEUE_NEXT_SIGNING_KEY',
} as const;
export type QueueEnvKey = (typeof QueueEnvKey)[keyof typeof QueueEnvKey];
export type QueueEnv = Record<QueueEnvKey, string>;
/** What the env Secret is built from: every value but the QStash-format token, derived from the token. */
export type QueueEnvSource = Omit<QueueEnv, typeof QueueEnvKey.QStashToken>;

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
