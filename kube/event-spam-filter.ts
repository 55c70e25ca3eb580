export interface EventSpamPolicy {
  /** Events one key may write at once. */
  burst: number;
  /** One more event is allowed per this long, up to `burst`. */
  refillIntervalMs: number;
  /** Keys remembered; the least recently used go first (a forgotten key starts with a full bucket). */
  maxKeys: number;
}

/** client-go's EventSourceObjectSpamFilter: burst 25, then one every 5 minutes. */
export const DEFAULT_EVENT_SPAM_POLICY: EventSpamPolicy = Object.freeze({
  burst: 25,
  refillIntervalMs: 300_000,
  maxKeys: 4096,
});

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/**
 * A token bucket per key (the recorder's key is object + reason), so that one object failing in
 * ever new words, or flapping, cannot flood etcd with Events. Pure: the caller passes the time.
 */
export class EventSpamFilter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly policy: EventSpamPolicy = DEFAULT_EVENT_SPAM_POLICY) {}

  /** Takes a token for `key` if one is left at `nowMs`; false means: drop this event. */
  allow(key: string, nowMs: number): boolean {
    const { burst, refillIntervalMs } = this.policy;
    const bucket = this.buckets.get(key) ?? { tokens: burst, updatedAt: nowMs };
    const refilled = Math.max(0, nowMs - bucket.updatedAt) / refillIntervalMs;
    bucket.tokens = Math.min(burst, bucket.tokens + refilled);
    bucket.updatedAt = nowMs;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    this.touch(key, bucket);
    return allowed;
  }

  private touch(key: string, bucket: Bucket): void {
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    for (const oldest of this.buckets.keys()) {
      if (this.buckets.size <= this.policy.maxKeys) break;
      this.buckets.delete(oldest);
    }
  }
}
