/**
 * QStash's plans as limit presets: a QueueBinding's `spec.plan` picks one row, `spec.limits.*`
 * overrides single figures, and a binding without a plan takes the operator's defaults, which are
 * the free row unless the operator's SETTEE_QUEUE_MAX_* settings say otherwise (queue-limits.ts).
 * Each figure is QStash's published one; docs/queue.md ("Plans") names the page of each.
 */

export const QUEUE_PLANS = ['free', 'paid'] as const;
export type QueuePlan = (typeof QUEUE_PLANS)[number];

/** The figures a plan sets: every per-binding limit that QStash's plans publish. */
export interface QueuePlanLimits {
  /** Longest Upstash-Delay / Upstash-Not-Before ("Max Delay"). */
  maxDelay: string;
  /** Longest Upstash-Timeout of one attempt ("Max HTTP Response Duration"). */
  maxTimeout: string;
  /** "Max Queue Count". */
  maxQueues: number;
  /** "Parallelism": the largest parallelism of one queue. */
  maxQueueParallelism: number;
  /** "Max Active Schedules". */
  maxSchedules: number;
  /** "Max Number of URL Groups". */
  maxUrlGroups: number;
  /** "Max Number of Endpoints per URL Group". */
  maxUrlGroupEndpoints: number;
}

/** The rate limits a plan sets (0: none); a binding without a plan has none. */
interface QueuePlanRateLimits {
  /** "Max Messages per Day". */
  maxMessagesPerDay: number;
  /** QStash's burst limit, requests a second: no current plan publishes a figure. */
  maxRequestsPerSecond: number;
}

/**
 * free: upstash.com/docs/qstash/overall/pricing ("Compare Plans", Free column): Max Delay 7 days,
 * Max HTTP Response Duration 15 minutes, Max Queue Count 10, Max Active Schedules 10, Max Number
 * of URL Groups 1, Max Number of Endpoints per URL Group 100. Its parallelism has no label we could
 * read, so the free row keeps Settee's earlier 100, the pay-as-you-go figure.
 * paid: upstash.com/pricing/qstash (its markdown form, "Pay as You Go — Pricing Details"): Max
 * delay 1 year, Max HTTP response duration 2 hours, Active schedules 1000, URL groups 100, Queue
 * count 100, Parallelism 100; endpoints per URL group 1,000, the most Settee allows (QStash's
 * paid column publishes none we could read, and the older docs table says "infinite" for Pro).
 */
export const QUEUE_PLAN_LIMITS: Readonly<Record<QueuePlan, Readonly<QueuePlanLimits>>> = Object.freeze({
  free: Object.freeze({
    maxDelay: '7d',
    maxTimeout: '15m',
    maxQueues: 10,
    maxQueueParallelism: 100,
    maxSchedules: 10,
    maxUrlGroups: 1,
    maxUrlGroupEndpoints: 100,
  }),
  paid: Object.freeze({
    maxDelay: '365d',
    maxTimeout: '2h',
    maxQueues: 100,
    maxQueueParallelism: 100,
    maxSchedules: 1_000,
    maxUrlGroups: 100,
    maxUrlGroupEndpoints: 1_000,
  }),
});

/**
 * free: "Max Messages per Day 1,000" (upstash.com/docs/qstash/overall/pricing, Compare Plans);
 * paid: "Max messages/day: Unlimited" (upstash.com/pricing/qstash, Pay as You Go). Neither page
 * publishes requests per second any more (an older version of the docs' table said 100 for both);
 * QStash's rate-limit page (upstash/docs qstash/api/api-ratelimiting) documents the burst limit's
 * headers but no figure, so Settee sets none and spec.limits.maxRequestsPerSecond is the operator's.
 */
export const QUEUE_PLAN_RATE_LIMITS: Readonly<Record<QueuePlan, Readonly<QueuePlanRateLimits>>> =
  Object.freeze({
    free: Object.freeze({ maxMessagesPerDay: 1_000, maxRequestsPerSecond: 0 }),
    paid: Object.freeze({ maxMessagesPerDay: 0, maxRequestsPerSecond: 0 }),
  });
