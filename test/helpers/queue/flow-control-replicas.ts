import { useQueueReplicas, type QueueReplicas } from './queue-replicas.js';

/**
 * The flow-control SDK suites' replicas: short blocking reads and polls so waiting messages move
 * quickly, eight deliveries at a time per replica, retries a thousand times sooner, and another
 * tenant's binding for the cross-tenant checks. `env` adds to or overrides these.
 */
export function useFlowControlReplicas(keyPrefix: string, env: Record<string, string> = {}): QueueReplicas {
  return useQueueReplicas({
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
}
