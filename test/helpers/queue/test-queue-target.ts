import type { RedisServer } from '../../../local/redis-server.js';
import {
  queueTargetKey,
  type QueueLimits,
  type QueueTarget,
} from '../../../gateway/queue/core/binding-registry.js';
import { QUEUE_LIMIT_DEFAULTS, resolveQueueLimits } from '../../../api/queue-limits.js';
import type { QueuePlan } from '../../../api/queue-plans.js';
import { toQueueLimits } from '../../../gateway/queue/bindings/queue-target.js';
import { randomSigningKey } from './signing-keys.js';

/**
 * A binding's queue target on a local Redis, as the gateway would derive it from a QueueBinding
 * (binding `ns/db` on database 0 with a fresh signing key unless told otherwise).
 */
export function testQueueTarget(
  server: RedisServer,
  options: {
    namespace?: string;
    name?: string;
    db?: number;
    signingKey?: string;
    nextSigningKey?: string;
    /** The binding's spec.plan, resolved as the operator does. */
    plan?: QueuePlan;
    limits?: Partial<QueueLimits>;
  } = {},
): QueueTarget {
  const namespace = options.namespace ?? 'ns';
  const name = options.name ?? 'db';
  return {
    key: queueTargetKey(namespace, name),
    namespace,
    name,
    token: server.password,
    signingKey: options.signingKey ?? randomSigningKey(),
    nextSigningKey: options.nextSigningKey ?? randomSigningKey(),
    signingKeyRotation: '',
    requestedSigningKeyRotation: '',
    connection: { host: server.host, port: server.port, tls: false, db: options.db ?? 0 },
    // The limits a binding without spec.limits gets from an operator with default settings.
    limits: {
      ...toQueueLimits(resolveQueueLimits(undefined, QUEUE_LIMIT_DEFAULTS, options.plan)),
      ...options.limits,
    },
  };
}
