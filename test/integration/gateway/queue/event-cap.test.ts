import { DELIVERY_GROUP, MESSAGE_FIELD, queueKeys } from '../../../../gateway/queue/core/keys.js';
import { cancelMessages } from '../../../../gateway/queue/scripts/cancel-messages.js';
import { completeDelivery } from '../../../../gateway/queue/scripts/complete-delivery.js';
import { useGatewayRedis } from '../../../helpers/queue/gateway-redis.js';

/**
 * The events stream's cap on a real Redis (record-event.ts): a script run checks the cap with its
 * first event and every 100th after it, so the stream may hold up to 99 events more than the cap
 * (beyond the whole stream node Redis's approximate MAXLEN may leave) until the next check.
 */
describe("the events stream's cap", () => {
  const db = useGatewayRedis();
  const CAP = 1_000;
  /** Redis's stream-node-max-entries: an approximate trim leaves up to one node's entries over. */
  const NODE_ENTRIES = 100;
  /** record-event.ts's TRIM_EVERY: the events a run appends between two checks of the cap. */
  const TRIM_EVERY = 100;
  const BOUND = CAP + TRIM_EVERY + NODE_ENTRIES;
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

  it('when a run records more events than the cap allows, then it trims as it goes, and the next run trims the stream back to about the cap', async () => {
    const events = queueKeys('{cap}:').events;
    await recordEvents(events, CAP + 500);
    const afterRun = await db.inspect.xlen(events);
    expect(afterRun).toBeGreaterThanOrEqual(CAP);
    expect(afterRun).toBeLessThanOrEqual(BOUND);
    await recordEvents(events, 1);
    const length = await db.inspect.xlen(events);
    expect(length).toBeGreaterThanOrEqual(CAP);
    expect(length).toBeLessThan(CAP + NODE_ENTRIES);
  });

  it('when a cancel of 500 scheduled messages runs on a stream at its cap, then its 1,000 events leave the stream within 100 and a node of the cap', async () => {
    const events = queueKeys('{cancel}:').events;
    await recordEvents(events, CAP);
    const k = queueKeys('{cancel}:');
    const ids = Array.from({ length: 500 }, (_, i) => `cancel-${i}`);
    await db.inspect.hset(k.scheduledMessages, ...ids.flatMap((id) => [id, 'stored']));
    await db.inspect.zadd(k.schedule, ...ids.flatMap((id, i) => [Date.now() + 60_000 + i, id]));
    const args: (string | number)[] = [CAP, MESSAGE_FIELD, DELIVERY_GROUP];
    for (const id of ids)
      args.push(
        id,
        '',
        JSON.stringify({ state: 'CANCEL_REQUESTED', id }),
        JSON.stringify({ state: 'CANCELLED', id }),
      );
    const [cancelled] = (await cancelMessages.run(
      db.redis,
      [k.stream, k.streamIndex, k.schedule, k.scheduledMessages, events, k.queues],
      args,
    )) as [number, unknown];
    expect(cancelled).toBe(500);
    const length = await db.inspect.xlen(events);
    expect(length).toBeGreaterThanOrEqual(CAP);
    expect(length).toBeLessThanOrEqual(BOUND);
    // The newest event is the last message's CANCELLED.
    const [[, fields]] = (await db.inspect.xrevrange(events, '+', '-', 'COUNT', 1)) as [[string, string[]]];
    expect(JSON.parse(fields[1]!)).toEqual({ state: 'CANCELLED', id: 'cancel-499' });
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
