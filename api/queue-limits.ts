import {
  DEFAULT_DEAD_LETTER_RETENTION,
  DEFAULT_DEDUPLICATION_WINDOW,
  DEFAULT_EVENT_RETENTION,
  DEFAULT_MAX_DELAY,
  DEFAULT_MAX_EVENTS,
  DEFAULT_MAX_WORKFLOW_RUNS,
  DEFAULT_WORKFLOW_RUN_RETENTION,
  type QueueBindingLimits,
} from './queue-binding.js';

/**
 * A binding's limits with every field resolved: its spec.limits where set, the operator's
 * defaults otherwise. The operator publishes them as status.limits; the gateway enforces them.
 */
export type EffectiveQueueLimits = Required<QueueBindingLimits>;

/** The limits whose defaults are the operator's settings (SETTEE_QUEUE_MAX_*, Helm `queue.*`). */
export type QueueLimitDefaults = Pick<
  EffectiveQueueLimits,
  | 'maxDeadLetters'
  | 'maxQueues'
  | 'maxQueueParallelism'
  | 'maxSchedules'
  | 'maxUrlGroups'
  | 'maxUrlGroupEndpoints'
>;

/** The most endpoints a URL group may be given, whatever the settings (the CRD's maximum). */
export const MAX_URL_GROUP_ENDPOINTS = 1_000;

export const QUEUE_LIMIT_DEFAULTS: Readonly<QueueLimitDefaults> = Object.freeze({
  maxDeadLetters: 10_000,
  // QStash's free plan: "Max Queue Count 10" (upstash.com/docs/qstash/overall/pricing).
  maxQueues: 10,
  // QStash publishes no free-plan figure we could read; 100 is issue 13's largest benchmark queue.
  maxQueueParallelism: 100,
  // QStash's free plan (upstash.com/pricing/qstash): "Max Active Schedules 10", "Max Number of URL
  // Groups 1", "Max Number of Endpoints per URL Group 100".
  maxSchedules: 10,
  maxUrlGroups: 1,
  maxUrlGroupEndpoints: 100,
});

/** Resolves spec.limits against the defaults (pure): each field set in the spec wins. */
export function resolveQueueLimits(
  spec: QueueBindingLimits | undefined,
  defaults: QueueLimitDefaults,
): EffectiveQueueLimits {
  return {
    maxDelay: spec?.maxDelay ?? DEFAULT_MAX_DELAY,
    deduplicationWindow: spec?.deduplicationWindow ?? DEFAULT_DEDUPLICATION_WINDOW,
    deadLetterRetention: spec?.deadLetterRetention ?? DEFAULT_DEAD_LETTER_RETENTION,
    maxDeadLetters: spec?.maxDeadLetters ?? defaults.maxDeadLetters,
    eventRetention: spec?.eventRetention ?? DEFAULT_EVENT_RETENTION,
    maxEvents: spec?.maxEvents ?? DEFAULT_MAX_EVENTS,
    workflowRunRetention: spec?.workflowRunRetention ?? DEFAULT_WORKFLOW_RUN_RETENTION,
    maxWorkflowRuns: spec?.maxWorkflowRuns ?? DEFAULT_MAX_WORKFLOW_RUNS,
    maxQueues: spec?.maxQueues ?? defaults.maxQueues,
    maxQueueParallelism: spec?.maxQueueParallelism ?? defaults.maxQueueParallelism,
    maxSchedules: spec?.maxSchedules ?? defaults.maxSchedules,
    maxUrlGroups: spec?.maxUrlGroups ?? defaults.maxUrlGroups,
    maxUrlGroupEndpoints: spec?.maxUrlGroupEndpoints ?? defaults.maxUrlGroupEndpoints,
  };
}
