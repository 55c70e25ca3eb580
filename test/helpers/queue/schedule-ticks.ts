import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { sleep, type SdkQueueSuite } from './sdk-queue-suite.js';
import type { RecordedDelivery } from './test-receiver.js';

/** What the SDK schedule suites add to {@link SdkQueueSuite}; see {@link useScheduleTicks}. */
export interface ScheduleTicks {
  /** The deliveries the receiver got from the schedule's ticks. */
  deliveriesOf(scheduleId: string): RecordedDelivery[];
  /**
   * The schedule's ticks delivered, counted by message id: delivery is at least once, and a
   * delivery whose answer a starved gateway saw only after its timeout comes again under the same id.
   */
  ticksOf(scheduleId: string): number;
  /** Makes the schedule's next tick come `agoMs` ago, as the clock reaching it would. */
  makeTickDue(scheduleId: string, agoMs?: number): Promise<unknown>;
  /** Long enough for both replicas' tickers (25 ms) and the deliveries to have run several times. */
  settle(): Promise<unknown>;
}

/**
 * Registers a beforeEach (after the suite's own) that deletes every schedule of the suite's binding
 * and then forgets the deliveries, so a tick of the previous test's schedules is not counted.
 */
export function useScheduleTicks(suite: SdkQueueSuite): ScheduleTicks {
  const keys = queueKeys(suite.config.keyPrefix);
  beforeEach(async () => {
    for (const schedule of await suite.client().schedules.list())
      await suite.client().schedules.delete(schedule.scheduleId);
    suite.receiver.deliveries.length = 0;
  });
  const deliveriesOf = (scheduleId: string) =>
    suite.receiver.deliveries.filter((d) => d.headers['upstash-schedule-id'] === scheduleId);
  return {
    deliveriesOf,
    ticksOf: (scheduleId) =>
      new Set(deliveriesOf(scheduleId).map((d) => d.headers['upstash-message-id'])).size,
    makeTickDue: (scheduleId, agoMs = 1_000) =>
      suite.inspect.zadd(keys.scheduleTicks, 'XX', Date.now() - agoMs, scheduleId),
    settle: () => sleep(500),
  };
}
