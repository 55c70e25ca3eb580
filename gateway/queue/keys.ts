/**
 * Every Redis key the queue uses in a tenant's database, named once. All keys share the configured
 * prefix, whose default `{settee-queue}:` is a hash tag: on a Redis Cluster they land in one slot,
 * so the multi-key Lua scripts stay legal.
 */
export interface QueueKeys {
  /** Stream of messages ready for delivery; each entry is one message (field `m`). */
  readonly stream: string;
  /** Sorted set of messages waiting for a retry: member = message id, score = due time (ms). */
  readonly retrySchedule: string;
  /** Hash of the messages waiting for a retry: field = message id, value = the encoded message. */
  readonly retryMessages: string;
  /** List of dead letters (JSON), newest first, capped. */
  readonly deadLetters: string;
  /** Hash of URL groups (QStash's topics): field = group name, value = `{createdAt, updatedAt, endpoints}` JSON. */
  readonly urlGroups: string;
}

/** The consumer group every gateway replica joins on a binding's stream. */
export const DELIVERY_GROUP = 'settee-delivery';
/** The stream entry field that holds the encoded message. */
export const MESSAGE_FIELD = 'm';

export function queueKeys(prefix: string): QueueKeys {
  return Object.freeze({
    stream: `${prefix}messages`,
    retrySchedule: `${prefix}retry-schedule`,
    retryMessages: `${prefix}retry-messages`,
    deadLetters: `${prefix}dead-letters`,
    urlGroups: `${prefix}url-groups`,
  });
}
