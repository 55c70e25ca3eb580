import type { V1StatefulSet } from '@kubernetes/client-node';
import type { ObjectKey } from '../../../kube/controller-runtime/object-key.js';
import type { HibernationDecision } from './hibernation.js';

/**
 * How long a hibernated instance's StatefulSet, found scaled up without a wake request, is left as
 * it is. The gateway sends its wake annotation and its Scale at 1 at the same moment
 * (gateway/proxy/waker.ts); the Scale, the smaller write, often lands first, and its watch event
 * can start a reconcile before the annotation is in the cache. Several of the gateway's retries of
 * a failed annotation (SETTEE_GATEWAY_WAKE_RETRY_INTERVAL, 1 s by default) fit in it.
 */
export const EARLY_WAKE_SCALE_GRACE_MS = 10_000;

/**
 * Whether a reconcile must wait before it scales a hibernated instance back to zero: while its
 * StatefulSet has replicas and the decision, from the cache, still says Hibernated (no wake request
 * newer than hibernatedAt), the wake request is taken to be on its way, for the grace from when this
 * was first seen. The annotation's own event reconciles the instance again (then woken, the replicas
 * already 1, nothing is written); without one, the grace's end scales it to zero as before, so a
 * scale that came alone (the annotation failed for good, or someone's `kubectl scale`) is undone.
 * Without this the operator scaled the gateway's Scale back to zero, and the annotation up again.
 */
export class EarlyWakeScale {
  /** Instance key -> when its StatefulSet was first seen scaled up while hibernated (epoch ms). */
  private readonly since = new Map<ObjectKey, number>();

  /** Milliseconds to wait before deciding again, or undefined: act on `decision` now. */
  deferMs(options: {
    key: ObjectKey;
    decision: HibernationDecision;
    statefulSet: V1StatefulSet | undefined;
    now: number;
  }): number | undefined {
    const { key, decision, statefulSet, now } = options;
    const early = decision.reason === 'Hibernated' && (statefulSet?.spec?.replicas ?? 0) > 0;
    if (!early) {
      this.since.delete(key);
      return undefined;
    }
    const since = this.since.get(key) ?? now;
    this.since.set(key, since);
    const left = since + EARLY_WAKE_SCALE_GRACE_MS - now;
    if (left > 0) return left;
    this.since.delete(key);
    return undefined;
  }

  forget(key: ObjectKey): void {
    this.since.delete(key);
  }
}
