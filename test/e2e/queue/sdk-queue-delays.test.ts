import type { Client } from '@upstash/qstash';
import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import { connectTestRedis } from '../../helpers/queue/redis-snapshot.js';
import { randomSigningKey } from '../../helpers/queue/signing-keys.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';
import { startTestReceiver, type TestReceiver } from '../../helpers/queue/test-receiver.js';
import { queueSdkClient } from '../../helpers/queue/queue-sdk-client.js';

/**
 * The maintenance pass (the slot audit that used to start delayed queue heads) runs this rarely
 * here, first this long after the replicas start: never while the suite runs, so a delayed queue
 * head that starts at all was started by the wake-up; ON_TIME_MS then only bounds how late.
 */
const POLL_INTERVAL_MS = 600_000;
/** Wide enough for a loaded CI machine to run the wake-up's timer late. */
const ON_TIME_MS = 2_000;

/**
 * A queue's delayed messages start at their due time, not at the next maintenance pass, through the
 * unchanged SDK on two gateway replicas whose maintenance pass does not run during the suite.
 */
describe('delayed queue messages start on time, @upstash/qstash SDK, two replicas', () => {
  const config = testQueueConfig({ pollIntervalMs: POLL_INTERVAL_MS });
  let redis: RedisServer;
  let replicas: TestQueueGateway[];
  let receiver: TestReceiver;
  let target: QueueTarget;
  let inspect: Redis;

  const client = (replica = 0): Client => queueSdkClient(replicas[replica]!, target);
  const arrivalOf = (body: string) =>
    waitFor(
      `the delivery of ${body}`,
      async () => receiver.deliveries.find((d) => d.body.toString() === body),
      {
        timeoutMs: 20_000,
        intervalMs: 10,
      },
    );

  beforeAll(async () => {
    redis = await startRedis();
    const signingKey = randomSigningKey();
    target = testQueueTarget(redis, { namespace: 'tenant-a', name: 'cache', signingKey });
    receiver = await startTestReceiver({ currentSigningKey: signingKey });
    inspect = connectTestRedis(redis);
    replicas = await Promise.all(
      ['replica-a', 'replica-b'].map((consumerName) =>
        startTestQueueGateway({ config: { ...config, consumerName }, targets: [target] }),
      ),
    );
  });
  afterAll(async () => {
    await Promise.all((replicas ?? []).map((replica) => replica.stop()));
    await receiver?.close();
    inspect?.disconnect();
    await redis?.stop();
  });

  it('when messages are enqueued with Upstash-Delay on either replica, then each is delivered at its notBefore, in queue order', async () => {
    const queue = client().queue({ queueName: 'soon' });
    await queue.upsert({ parallelism: 2 });
    const first = await queue.enqueue({ url: `${receiver.baseUrl}/soon`, body: 'first', delay: 1 });
    const second = await client(1)
      .queue({ queueName: 'soon' })
      .enqueue({ url: `${receiver.baseUrl}/soon`, body: 'second', delay: 2 });
    const due = {
      first: (await client().messages.get(first.messageId)).notBefore!,
      second: (await client().messages.get(second.messageId)).notBefore!,
    };
    const [a, b] = [await arrivalOf('first'), await arrivalOf('second')];
    expect(a.at).toBeGreaterThanOrEqual(due.first);
    expect(a.at - due.first).toBeLessThan(ON_TIME_MS);
    expect(b.at).toBeGreaterThanOrEqual(due.second);
    expect(b.at - due.second).toBeLessThan(ON_TIME_MS);
  });

  it('when a schedule into a queue has Upstash-Delay, then its tick is delivered at the tick plus the delay', async () => {
    const { scheduleId } = await client().schedules.create({
      destination: `${receiver.baseUrl}/tick`,
      cron: '0 0 1 1 *',
      queueName: 'ticks',
      delay: 2,
      body: 'tick',
    });
    await inspect.zadd(queueKeys(config.keyPrefix).scheduleTicks, 'XX', Date.now() - 1_000, scheduleId);
    // A ticker looks for ticks set by others once per poll interval, and at once when it starts:
    // restarting the first replica's workers (its mover, pass timer and ticker) makes it look now
    // without running a pass. Read the tick's due time.
    await replicas[0]!.stopWorkers();
    replicas[0]!.startWorkers();
    const messageId = await waitFor(
      'the tick enqueued',
      async () => (await inspect.lrange(queueKeys(config.keyPrefix).queueWaiting('ticks'), 0, 0))[0],
      { timeoutMs: 10_000, intervalMs: 10 },
    );
    const due = (await client().messages.get(messageId)).notBefore!;
    const tick = await arrivalOf('tick');
    expect(tick.headers['upstash-schedule-id']).toBe(scheduleId);
    expect(tick.at).toBeGreaterThanOrEqual(due);
    expect(tick.at - due).toBeLessThan(ON_TIME_MS);
    await client().schedules.delete(scheduleId);
  });
});
