import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { waitFor } from '../../../local/wait.js';
import { useQueueReplicas, type QueueReplicas } from './queue-replicas.js';

export interface FlowControlReplicas extends QueueReplicas {
  /** Waits until the recording destination has received `count` deliveries in all. */
  delivered(count: number, timeoutMs?: number): Promise<void>;
  /**
   * Waits until the mover forgets an idle key (nothing waiting or in flight, its rate window over,
   * neither paused nor pinned), so no later test's snapshot sees it go.
   */
  forgotten(key: string): Promise<void>;
}

/**
 * The flow-control SDK suites' replicas: short blocking reads and polls so waiting messages move
 * quickly, eight deliveries at a time per replica, retries a thousand times sooner, and another
 * tenant's binding for the cross-tenant checks. `env` adds to or overrides these.
 */
export function useFlowControlReplicas(
  keyPrefix: string,
  env: Record<string, string> = {},
): FlowControlReplicas {
  const keys = queueKeys(keyPrefix);
  const replicas = useQueueReplicas({
    keyPrefix,
    env: {
      SETTEE_QUEUE_BLOCK_MS: '200',
      SETTEE_QUEUE_POLL_INTERVAL_MS: '100',
      SETTEE_QUEUE_WORKER_CONCURRENCY: '8',
      SETTEE_QUEUE_RETRY_DELAY_SCALE: '0.001',
      ...env,
    },
    otherTenant: true,
  });
  return Object.assign(replicas, {
    delivered: async (count: number, timeoutMs = 15_000) => {
      await waitFor(
        `${count} deliveries`,
        async () => replicas.destination.requests.length >= count || undefined,
        { timeoutMs, intervalMs: 20 },
      );
    },
    forgotten: async (key: string) => {
      await waitFor(
        `flow-control key ${key} forgotten`,
        async () => (await replicas.inspect.hexists(keys.flowControls, key)) === 0 || undefined,
        { timeoutMs: 5_000, intervalMs: 20 },
      );
    },
  });
}
