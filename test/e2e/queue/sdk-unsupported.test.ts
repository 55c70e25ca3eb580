import { Client } from '@upstash/qstash';
import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import type { QueueTarget } from '../../../gateway/queue/binding-registry.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import { connectTestRedis, snapshotDatabase } from '../../helpers/queue/redis-snapshot.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';

/**
 * What the queue does not have yet (flow control) answers the SDK's
 * calls with a 400 that says so, never a silent success or a bare 404, and stores nothing.
 */
describe('SDK calls of features not built yet', () => {
  let redis: RedisServer;
  let gateway: TestQueueGateway;
  let target: QueueTarget;
  let inspect: Redis;

  beforeAll(async () => {
    redis = await startRedis();
    target = testQueueTarget(redis);
    inspect = connectTestRedis(redis);
    gateway = await startTestQueueGateway({ config: testQueueConfig(), targets: [target], workers: false });
  });
  afterAll(async () => {
    await gateway?.stop();
    inspect?.disconnect();
    await redis?.stop();
  });

  async function quietly<T>(call: () => Promise<T>): Promise<T> {
    const original = console.error;
    console.error = () => undefined;
    try {
      return await call();
    } finally {
      console.error = original;
    }
  }

  it('when flow control calls are made, then each is refused naming the feature, and nothing is stored', async () => {
    const client = new Client({
      baseUrl: gateway.queueUrl(target),
      token: target.token,
      retry: false,
      enableTelemetry: false,
    });
    const snapshot = await snapshotDatabase(inspect);
    const calls: [string, () => Promise<unknown>, RegExp][] = [
      [
        'publish with flowControl',
        () =>
          client.publishJSON({
            url: 'https://a.example/x',
            body: {},
            flowControl: { key: 'k', parallelism: 1 },
          }),
        /flow control/,
      ],
      ['flowControl.get', () => client.flowControl.get('k'), /flow control .* is not supported yet/],
      ['flowControl.getGlobalParallelism', () => client.flowControl.getGlobalParallelism(), /flow control/],
      ['flowControl.pause', () => client.flowControl.pause('k'), /flow control/],
      ['flowControl.resetRate', () => client.flowControl.resetRate('k'), /flow control/],
    ];
    for (const [name, call, message] of calls) {
      const outcome = await quietly(call).then(
        () => 'resolved',
        (err: Error) => err.message,
      );
      expect({ name, outcome }).toEqual({ name, outcome: expect.stringMatching(message) });
    }
    expect(await snapshotDatabase(inspect)).toEqual(snapshot);
  });
});
