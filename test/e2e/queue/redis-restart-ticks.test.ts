import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { ScheduleStore } from '../../../gateway/queue/stores/schedule-store.js';
import type { TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import { connectTestRedis } from '../../helpers/queue/redis-snapshot.js';
import { randomSigningKey } from '../../helpers/queue/signing-keys.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';
import type { TestReceiver } from '../../helpers/queue/test-receiver.js';
import { startRestartSuiteProcesses, stopRestartSuite } from '../../helpers/queue/restart-suite.js';
import { queueSdkClient } from '../../helpers/queue/queue-sdk-client.js';

const SCHEDULES = 2_000;

interface Outage {
  how: string;
  /** The queue Redis's fsync policy for this case. */
  appendfsync: 'always' | 'everysec';
  /** Takes Redis down: SIGTERM (it flushes its append-only file first) or SIGKILL (a crash). */
  stop(redis: RedisServer): Promise<void>;
}

/**
 * The binding's redis-server taken down in the middle of a round of 2,000 schedule ticks (when the
 * first tick's CREATED event appears) and started again on its append-only file and port, under two gateway
 * replicas: each schedule's tick becomes exactly one message, none lost, none doubled. A graceful
 * stop flushes the file, so Redis's default `appendfsync everysec` holds; a crash (SIGKILL) keeps
 * exactly what was fsynced, so it runs with `appendfsync always`, the setting docs/queue.md
 * ("Redis persistence") names for exactly-once ticks across a crash. Deliveries themselves are at
 * least once: a message on the wire when Redis went may be sent again, with its same id.
 */
describe.each<Outage>([
  { how: 'stopped (SIGTERM)', appendfsync: 'everysec', stop: (redis) => redis.stop() },
  { how: 'killed (SIGKILL)', appendfsync: 'always', stop: (redis) => redis.kill() },
])('a real redis-server $how in the middle of a round of schedule ticks', ({ appendfsync, stop }) => {
  const config = testQueueConfig();
  const keys = queueKeys(config.keyPrefix);
  const password = 'restart-ticks-password';
  let dataDir: string;
  let redis: RedisServer;
  let replicas: TestQueueGateway[];
  let receiver: TestReceiver;
  let target: QueueTarget;
  let signingKey: string;

  const limits = { maxSchedules: SCHEDULES + 1 };

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-restart-ticks-'));
    redis = await startRedis({ dataDir, password, appendfsync });
    signingKey = randomSigningKey();
    target = testQueueTarget(redis, { signingKey, limits });
    ({ receiver, replicas } = await startRestartSuiteProcesses(target, signingKey, ['ticks-a', 'ticks-b']));
  });

  afterAll(() => stopRestartSuite({ replicas, receiver, redis, dataDir }));

  it(`when Redis goes down mid-round and comes back, then each of ${SCHEDULES} schedules' tick is exactly one message, delivered`, async () => {
    // One schedule through the SDK, copied into the others: its template is what a create stores.
    const client = queueSdkClient(replicas[0]!, target);
    const { scheduleId: first } = await client.schedules.create({
      destination: `${receiver.baseUrl}/tick`,
      cron: '0 0 1 1 *',
      body: 'tick',
    });
    const setup = connectTestRedis(redis);
    const watch = connectTestRedis(redis);
    try {
      const store = new ScheduleStore(setup, keys);
      const original = (await store.get(first))!;
      const ids = [first];
      for (let i = 1; i < SCHEDULES; i += 1) {
        const scheduleId = `restart-${i}`;
        ids.push(scheduleId);
        await store.save({ ...original.record, scheduleId }, original.template, {
          nextTick: original.nextTick,
          maxSchedules: limits.maxSchedules,
        });
      }
      // Waits for the first event after now, from the stream's last entry: no race with the ticks.
      const [last] = await setup.xrevrange(keys.events, '+', '-', 'COUNT', 1);
      const firstEvent = watch.xread('BLOCK', 0, 'STREAMS', keys.events, last?.[0] ?? '0-0');
      const due = Date.now() - 1_000;
      await setup.zadd(keys.scheduleTicks, 'XX', ...ids.flatMap((id) => [due, id]));
      await firstEvent;
      const firedBefore = await setup.hlen(keys.scheduleLastTicks);
      setup.disconnect();
      watch.disconnect();
      await stop(redis);
      // The outage came while the round was under way, not before it or after it.
      expect(firedBefore).toBeGreaterThan(0);
      expect(firedBefore).toBeLessThan(SCHEDULES);

      redis = await startRedis({ dataDir, password, appendfsync, port: redis.port });
      target = testQueueTarget(redis, { signingKey, limits });
      for (const replica of replicas) replica.registry.set(target);

      const messagesBySchedule = () => {
        const messages = new Map<string, Set<string>>();
        for (const delivery of receiver.deliveries) {
          const scheduleId = String(delivery.headers['upstash-schedule-id']);
          const ofSchedule = messages.get(scheduleId) ?? new Set<string>();
          ofSchedule.add(String(delivery.headers['upstash-message-id']));
          messages.set(scheduleId, ofSchedule);
        }
        return messages;
      };
      // Ticks claimed but not fired when Redis went wait for their claim to run out.
      await waitFor(
        `every schedule's tick delivered`,
        async () => messagesBySchedule().size === SCHEDULES || undefined,
        { timeoutMs: 90_000, intervalMs: 250 },
      );
      // Both replicas' tickers (every 25 ms) have had time to fire any tick a second time.
      const inspect = connectTestRedis(redis);
      try {
        await waitFor(
          'nothing left to deliver',
          async () => ((await inspect.xlen(keys.stream)) === 0 ? true : undefined),
          { timeoutMs: 30_000, intervalMs: 100 },
        );
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        const messages = messagesBySchedule();
        expect([...messages.keys()].sort()).toEqual([...ids].sort());
        const doubled = [...messages].filter(([, ofSchedule]) => ofSchedule.size !== 1);
        expect(doubled).toEqual([]);
        const lastTicks = await inspect.hgetall(keys.scheduleLastTicks);
        expect(Object.keys(lastTicks)).toHaveLength(SCHEDULES);
        // A tick claimed again after its claim ran out records that claim as its time: never earlier.
        expect(Object.values(lastTicks).filter((tick) => Number(tick) < due)).toEqual([]);
      } finally {
        inspect.disconnect();
      }
    } finally {
      setup.disconnect();
      watch.disconnect();
    }
  }, 180_000);
});
