import { Client, QstashError } from '@upstash/qstash';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import {
  startRecordingDestination,
  type RecordingDestination,
} from '../../helpers/queue/recording-destination.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';
import { quietly } from '../../helpers/queue/quietly.js';

/**
 * A binding's spec.plan picks QStash's published limits (api/queue-plans.ts): the free plan's
 * 15-minute attempts, 7-day delays and one URL group, the paid plan's 2 hours, a year and 100.
 */
describe("QStash's plans as a binding's limits, through the @upstash/qstash SDK", () => {
  let freeRedis: RedisServer;
  let paidRedis: RedisServer;
  let destination: RecordingDestination;
  let free: QueueTarget;
  let paid: QueueTarget;
  let gateway: TestQueueGateway;
  let replica: TestQueueGateway;
  // Another consumer takes over an entry idle for this long (XAUTOCLAIM), unless its holder keeps it.
  const config = testQueueConfig({ reclaimIdleMs: 4_000, deliveryTimeoutMs: 1_000 });

  const client = (target: QueueTarget): Client =>
    new Client({
      baseUrl: gateway.queueUrl(target),
      token: target.token,
      retry: false,
      enableTelemetry: false,
    });
  const hook = (name: string) => `${destination.baseUrl}/hooks/${name}`;
  const refusal = async (call: () => Promise<unknown>): Promise<QstashError> => {
    const err = await quietly(call).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(QstashError);
    return err as QstashError;
  };

  beforeAll(async () => {
    [freeRedis, paidRedis] = await Promise.all([startRedis(), startRedis()]);
    destination = await startRecordingDestination();
    free = testQueueTarget(freeRedis, { namespace: 'plans', name: 'free', plan: 'free' });
    paid = testQueueTarget(paidRedis, { namespace: 'plans', name: 'paid', plan: 'paid' });
    gateway = await startTestQueueGateway({ config, targets: [free, paid] });
    replica = await startTestQueueGateway({
      config: { ...config, consumerName: `${config.consumerName}-b` },
      targets: [paid],
    });
  });

  afterAll(async () => {
    await replica?.stop();
    await gateway?.stop();
    await destination?.close();
    await Promise.all([freeRedis?.stop(), paidRedis?.stop()]);
  });

  it('when a publish asks for a 20-minute attempt or a 10-day delay, then a free binding refuses it naming the limit and a paid one stores it', async () => {
    const err = await refusal(() =>
      client(free).publishJSON({ url: hook('slow'), body: {}, timeout: '20m' }),
    );
    expect(err.status).toBe(400);
    expect(err.message).toMatch(
      /Upstash-Timeout 20m is longer than the queue's maximum timeout of 15m \(QueueBinding spec.limits.maxTimeout\)/,
    );
    const late = await refusal(() => client(free).publishJSON({ url: hook('late'), body: {}, delay: '10d' }));
    expect(late.status).toBe(400);
    expect(late.message).toMatch(
      /longer than the queue's maximum delay of 7d \(QueueBinding spec.limits.maxDelay\)/,
    );
    // 90 s is within both plans' published figures (free: 15 minutes).
    await expect(
      client(free).publishJSON({ url: hook('ninety'), body: {}, timeout: '90s', delay: '1h' }),
    ).resolves.toHaveProperty('messageId');

    const slow = await client(paid).publishJSON({
      url: hook('slow'),
      body: {},
      timeout: '20m',
      delay: '10d',
    });
    expect(await client(paid).messages.get(slow.messageId)).toMatchObject({ messageId: slow.messageId });
  });

  it('when a second URL group is made, then a free binding answers 412 and a paid one keeps both', async () => {
    await client(free).urlGroups.addEndpoints({ name: 'first', endpoints: [{ url: hook('a') }] });
    const err = await refusal(() =>
      client(free).urlGroups.addEndpoints({ name: 'second', endpoints: [{ url: hook('b') }] }),
    );
    expect(err.status).toBe(412);
    expect(err.message).toMatch(/spec.limits.maxUrlGroups/);
    for (const name of ['first', 'second'])
      await client(paid).urlGroups.addEndpoints({ name, endpoints: [{ url: hook(name) }] });
    expect((await client(paid).urlGroups.list()).map((g) => g.name)).toEqual(['first', 'second']);
  });

  it("when an attempt the paid plan allows outlasts the gateway's reclaim time on two replicas, then it is sent once", async () => {
    destination.answer = (request) =>
      request.path === '/hooks/long' ? { status: 200, delayMs: 6_000 } : { status: 200 };
    const { messageId } = await client(paid).publishJSON({
      url: hook('long'),
      body: {},
      timeout: '10s',
      retries: 0,
    });
    await waitFor(
      'the long attempt answered',
      async () => (destination.attemptsOf(messageId).length > 0 ? true : undefined),
      {
        timeoutMs: 5_000,
        intervalMs: 20,
      },
    );
    // A worker records an attempt's ACTIVE event in the step that checks the entry is still there,
    // just before it sends; the DELIVERED event is recorded in the step that deletes the entry. Once
    // DELIVERED is there, every attempt any replica sent or will send has its ACTIVE before it.
    const states = await waitFor(
      'the DELIVERED event',
      async () => {
        const { logs } = await client(paid).logs({ filter: { messageId } });
        const seen = logs.map((log) => log.state);
        return seen.includes('DELIVERED') ? seen : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    expect(states.filter((state) => state === 'ACTIVE')).toHaveLength(1);
    expect(destination.attemptsOf(messageId)).toHaveLength(1);
  });
});
