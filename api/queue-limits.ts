import {
  DEFAULT_DEAD_LETTER_RETENTION,
  DEFAULT_DEDUPLICATION_WINDOW,
  DEFAULT_EVENT_RETENTION,
  DEFAULT_MAX_EVENTS,
  DEFAULT_MAX_WORKFLOW_CONTEXT_BYTES,
  DEFAULT_MAX_WORKFLOW_RUNS,
  DEFAULT_MAX_WORKFLOW_STEPS,
  DEFAULT_WORKFLOW_RUN_RETENTION,
  type QueueBindingLimits,
} from './queue-binding.js';
import {
  QUEUE_PLAN_LIMITS,
  QUEUE_PLAN_RATE_LIMITS,
  type QueuePlan,
  type QueuePlanLimits,
} from './queue-plans.js';

/**
 * A binding's limits with every field resolved: its spec.limits where set, else its spec.plan's
 * figure (queue-plans.ts), else the operator's defaults. The operator publishes them as
 * status.limits; the gateway enforces them.
 */
export type EffectiveQueueLimits = Required<QueueBindingLimits>;

/**
 * The limits of a binding without a plan: the operator's settings (SETTEE_QUEUE_MAX_*, Helm
 * `queue.*`), which default to QStash's free plan.
 */
export type QueueLimitDefaults = QueuePlanLimits & Pick<EffectiveQueueLimits, 'maxDeadLetters'>;

/** The most endpoints a URL group may be given, whatever the settings (the CRD's maximum). */
export const MAX_URL_GROUP_ENDPOINTS = 1_000;

export const QUEUE_LIMIT_DEFAULTS: Readonly<QueueLimitDefaults> = Object.freeze({
  maxDeadLetters: 10_000,
  ...QUEUE_PLAN_LIMITS.free,
});

/**
 * Resolves spec.limits against the plan's row, or the operator's defaults when the binding names
 * no plan (pure): each field set in spec.limits wins.
 */
export function resolveQueueLimits(
  spec: QueueBindingLimits | undefined,
  operatorDefaults: QueueLimitDefaults,
  plan?: QueuePlan,
): EffectiveQueueLimits {
  const defaults =
    plan === undefined ? operatorDefaults : { ...operatorDefaults, ...QUEUE_PLAN_LIMITS[plan] };
  return {
    maxDelay: spec?.maxDelay ?? defaults.maxDelay,
    maxTimeout: spec?.maxTimeout ?? defaults.maxTimeout,
    deduplicationWindow: spec?.deduplicationWindow ?? DEFAULT_DEDUPLICATION_WINDOW,
    deadLetterRetention: spec?.deadLetterRetention ?? DEFAULT_DEAD_LETTER_RETENTION,
    maxDeadLetters: spec?.maxDeadLetters ?? defaults.maxDeadLetters,
    eventRetention: spec?.eventRetention ?? DEFAULT_EVENT_RETENTION,
    maxEvents: spec?.maxEvents ?? DEFAULT_MAX_EVENTS,
    workflowRunRetention: spec?.workflowRunRetention ?? DEFAULT_WORKFLOW_RUN_RETENTION,
    maxWorkflowRuns: spec?.maxWorkflowRuns ?? DEFAULT_MAX_WORKFLOW_RUNS,
    maxWorkflowSteps: spec?.maxWorkflowSteps ?? DEFAULT_MAX_WORKFLOW_STEPS,
    maxWorkflowContextBytes: spec?.maxWorkflowContextBytes ?? DEFAULT_MAX_WORKFLOW_CONTEXT_BYTES,
    maxQueues: spec?.maxQueues ?? defaults.maxQueues,
    maxQueueParallelism: spec?.maxQueueParallelism ?? defaults.maxQueueParallelism,
    maxSchedules: spec?.maxSchedules ?? defaults.maxSchedules,
    maxUrlGroups: spec?.maxUrlGroups ?? defaults.maxUrlGroups,
    maxUrlGroupEndpoints: spec?.maxUrlGroupEndpoints ?? defaults.maxUrlGroupEndpoints,
    // Rate limits come from the plan alone: an operator's defaults never impose one.
    maxMessagesPerDay:
      spec?.maxMessagesPerDay ?? (plan === undefined ? 0 : QUEUE_PLAN_RATE_LIMITS[plan].maxMessagesPerDay),
    maxRequestsPerSecond:
      spec?.maxRequestsPerSecond ??
      (plan === undefined ? 0 : QUEUE_PLAN_RATE_LIMITS[plan].maxRequestsPerSecond),
  };
}
