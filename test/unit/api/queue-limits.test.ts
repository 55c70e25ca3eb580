import { QUEUE_LIMIT_DEFAULTS, resolveQueueLimits } from '../../../api/queue-limits.js';

describe("a binding's effective limits", () => {
  it("when spec.limits is absent, then every limit is the default: QStash's free plan where it publishes one", () => {
    expect(resolveQueueLimits(undefined, QUEUE_LIMIT_DEFAULTS)).toEqual({
      maxDelay: '7d',
      maxTimeout: '15m',
      deduplicationWindow: '10m',
      deadLetterRetention: '7d',
      maxDeadLetters: 10_000,
      eventRetention: '3d',
      maxEvents: 100_000,
      workflowRunRetention: '3d',
      maxWorkflowRuns: 10_000,
      maxWorkflowSteps: 1_000,
      maxWorkflowContextBytes: 104_857_600,
      maxQueues: 10,
      maxQueueParallelism: 100,
      maxSchedules: 10,
      maxUrlGroups: 1,
      maxUrlGroupEndpoints: 100,
      maxMessagesPerDay: 0,
      maxRequestsPerSecond: 0,
    });
  });

  it('when spec.limits sets some fields, then those win and the rest come from the given defaults', () => {
    const defaults = { ...QUEUE_LIMIT_DEFAULTS, maxQueues: 25, maxSchedules: 30 };
    expect(resolveQueueLimits({ maxSchedules: 2, maxDelay: '1d' }, defaults)).toMatchObject({
      maxDelay: '1d',
      maxQueues: 25,
      maxSchedules: 2,
      maxUrlGroups: 1,
    });
  });

  it('when spec.plan is paid, then its row of the plan table replaces the defaults, and spec.limits still wins over it', () => {
    const defaults = { ...QUEUE_LIMIT_DEFAULTS, maxQueues: 25 };
    expect(resolveQueueLimits({ maxSchedules: 2 }, defaults, 'paid')).toMatchObject({
      maxDelay: '365d',
      maxTimeout: '2h',
      maxQueues: 100,
      maxSchedules: 2,
      maxUrlGroups: 100,
      maxUrlGroupEndpoints: 1_000,
      maxDeadLetters: 10_000,
    });
    // The free plan is its published figures, whatever the operator's settings.
    expect(resolveQueueLimits(undefined, defaults, 'free')).toMatchObject({
      maxQueues: 10,
      maxTimeout: '15m',
    });
  });

  it("when spec.plan is free, then its messages a day are QStash's 1,000; paid and no plan have none, and no plan has a figure for requests a second", () => {
    expect(resolveQueueLimits(undefined, QUEUE_LIMIT_DEFAULTS, 'free')).toMatchObject({
      maxMessagesPerDay: 1_000,
      maxRequestsPerSecond: 0,
    });
    expect(resolveQueueLimits(undefined, QUEUE_LIMIT_DEFAULTS, 'paid')).toMatchObject({
      maxMessagesPerDay: 0,
      maxRequestsPerSecond: 0,
    });
    expect(
      resolveQueueLimits({ maxMessagesPerDay: 5, maxRequestsPerSecond: 2 }, QUEUE_LIMIT_DEFAULTS, 'free'),
    ).toMatchObject({ maxMessagesPerDay: 5, maxRequestsPerSecond: 2 });
  });
});
