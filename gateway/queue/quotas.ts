import type { QueueTarget } from './bindings/binding-registry.js';

/**
 * What bounds one binding's queue objects: its effective limits, which the operator resolved from
 * spec.limits and its own defaults (QStash's free plan figures). Over any of them the API answers 412.
 */
export interface BindingQuotas {
  /** The most queues (limits.maxQueues). */
  maxQueues: number;
  /** The largest parallelism of one queue (limits.maxQueueParallelism). */
  maxParallelism: number;
  /** The most active (unpaused) schedules, as QStash's plans count them (limits.maxSchedules). */
  maxSchedules: number;
  /** The most URL groups (limits.maxUrlGroups). */
  maxUrlGroups: number;
  /** The most endpoints of one URL group (limits.maxUrlGroupEndpoints). */
  maxUrlGroupEndpoints: number;
}

export function quotasOf(target: Pick<QueueTarget, 'limits'>): BindingQuotas {
  const limits = target.limits;
  return {
    maxQueues: limits.maxQueues,
    maxParallelism: limits.maxQueueParallelism,
    maxSchedules: limits.maxSchedules,
    maxUrlGroups: limits.maxUrlGroups,
    maxUrlGroupEndpoints: limits.maxUrlGroupEndpoints,
  };
}
