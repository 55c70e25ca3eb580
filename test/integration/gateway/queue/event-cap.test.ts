import { DELIVERY_GROUP, queueKeys } from '../../../../gateway/queue/core/keys.js';
import { completeDelivery } from '../../../../gateway/queue/scripts/complete-delivery.js';
import { useGatewayRedis } from '../../../helpers/queue/gateway-redis.js';

/**
 * The events stream's cap on a real Redis (record-event.ts): a script run checks the cap with its
 * first event only, so the stream may hold one run's events more than the cap until the next run
 * trims it back to about the cap (whole stream nodes: Redis's approximate MAXLEN).
 */
describe("the events stream's cap", () => {
  const db = useGatewayRedis();
  const CAP = 1_000;
  /** Redis's stream-node-max-entries: an approximate trim leaves up to one node's entries over. */
  const NODE_ENTRIES = 100;
  let run = 0;

  /** One completion run that records `count` DELIVERED events (of entries no stream holds). */
  const recordEvents = async (events: string, count: number): Promise<void> => {
    const args: (string | number)[] = [DELIVERY_GROUP, CAP];
    for (let i = 0; i < count; i++)
      args.push(`${run + 1}-${i}`, '', JSON.stringify({ state: 'DELIVERED', i }));
    run += 1;
    const k = queueKeys(`{events-${run}}:`);
    await completeDelivery.run(db.redis, [k.stream, k.streamIndex, events], args);
  };

  it('when a run records more events than the cap allows, then it trims once, first, and the next run trims the stream back to about the cap', async () => {
    const events = queueKeys('{cap}:').events;
    await recordEvents(events, CAP + 500);
    expect(await db.inspect.xlen(events)).toBe(CAP + 500);
    await recordEvents(events, 1);
    const length = await db.inspect.xlen(events);
    expect(length).toBeGreaterThanOrEqual(CAP);
    expect(length).toBeLessThan(CAP + NODE_ENTRIES);
  });

  it("when runs of a worker's size keep recording, then the stream stays within one run and one node of the cap", async () => {
    const events = queueKeys('{steady}:').events;
    const RUN = 40;
    let longest = 0;
    for (let i = 0; i < 100; i++) {
      await recordEvents(events, RUN);
      longest = Math.max(longest, await db.inspect.xlen(events));
    }
    expect(longest).toBeGreaterThan(CAP);
    expect(longest).toBeLessThan(CAP + RUN + NODE_ENTRIES);
    // The newest events are kept: the last run's are all there.
    const newest = await db.inspect.xrevrange(events, '+', '-', 'COUNT', RUN);
    expect(newest.map(([, fields]) => (JSON.parse(fields[1]!) as { i: number }).i)).toEqual(
      Array.from({ length: RUN }, (_, i) => RUN - 1 - i),
    );
  });
});
