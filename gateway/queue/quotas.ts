import type { QueueTarget } from './bindings/binding-registry.js';
import type { QueueConfig } from './config.js';

/**
 * What bounds one binding's queue objects: its QueueBinding spec.limits, else the gateway's
 * settings (whose defaults are QStash's free plan figures). Over any of them the API answers 412.
 */
export interface BindingQuotas {
  /** The most queues (spec.limits.maxQueues). */
  maxQueues: number;
  /** The largest parallelism of one queue (spec.limits.maxQueueParallelism). */
  maxParallelism: number;
  /** The most active (unpaused) schedules, as QStash's plans count them (spec.limits.maxSchedules). */
  maxSchedules: number;
  /** The most URL groups (spec.limits.maxUrlGroups). */
  maxUrlGroups: number;
  /** The most endpoints of one URL group (spec.limits.maxUrlGroupEndpoints). */
  maxUrlGroupEndpoints: number;
}

/** The gateway settings that stand in for a binding's missing spec.limits. */
export type QuotaSettings = Pick<
  QueueConfig,
  'maxQueues' | 'maxQueueParallelism' | 'maxSchedules' | 'maxUrlGroups' | 'maxUrlGroupEndpoints'
>;

export function quotasOf(target: Pick<QueueTarget, 'limits'>, config: QuotaSettings): BindingQuotas {
  const limits = target.limits;
  return {
    maxQueues: limits.maxQueues ?? config.maxQueues,
    maxParallelism: limits.maxQueueParallelism ?? config.maxQueueParallelism,
    maxSchedules: limits.maxSchedules ?? config.maxSchedules,
    maxUrlGroups: limits.maxUrlGroups ?? config.maxUrlGroups,
    maxUrlGroupEndpoints: limits.maxUrlGroupEndpoints ?? config.maxUrlGroupEndpoints,
  };
}
