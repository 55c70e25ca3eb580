import type { QueueTarget } from './binding-registry.js';
import { QuotaExceededError } from './errors.js';

/**
 * What bounds one binding's queue objects: its effective limits, which the operator resolved from
 * spec.limits and its own defaults (QStash's free plan figures). Over a count the API answers 412,
 * over maxParallelism 400 (docs/queue.md, Quotas).
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

/**
 * The quotas that count stored objects. Only a script can check one (the count and the write in
 * one step), and over one it refuses the change (scripts/quota-exceeded.ts); maxParallelism bounds
 * a value in the request instead, checked before any script runs.
 */
export const COUNT_QUOTAS = ['maxQueues', 'maxSchedules', 'maxUrlGroups', 'maxUrlGroupEndpoints'] as const;
export type CountQuota = (typeof COUNT_QUOTAS)[number];

/** Which queue quota a missing queue would pass: said in the 412 and in a refused tick's FAILED event. */
export function queueLimitReached(maxQueues: number): string {
  return `queue limit reached: the binding has its most queues (${maxQueues}, QueueBinding spec.limits.maxQueues)`;
}

/** QStash's 412 for each count quota: the quota, the field that raises it, and what makes room. */
const QUOTA_MESSAGES: Record<CountQuota, (limit: number) => string> = {
  maxQueues: (limit) => `${queueLimitReached(limit)}; delete one first`,
  maxSchedules: (limit) =>
    `schedule limit reached: the binding has its most active schedules (${limit}, QueueBinding spec.limits.maxSchedules); pause or delete one first`,
  maxUrlGroups: (limit) =>
    `url group limit reached: the binding has its most url groups (${limit}, QueueBinding spec.limits.maxUrlGroups); delete one first`,
  maxUrlGroupEndpoints: (limit) =>
    `endpoint limit reached: a url group holds at most ${limit} endpoints (QueueBinding spec.limits.maxUrlGroupEndpoints)`,
};

export function quotaExceeded(quota: CountQuota, limit: number): QuotaExceededError {
  return new QuotaExceededError(QUOTA_MESSAGES[quota](limit));
}
