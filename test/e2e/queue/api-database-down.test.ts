import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';

/** The publish, messages, DLQ, events, schedule and URL group routes when the binding's database is gone: a 503 naming what failed. */
describe("the queue's management API with its database unreachable", () => {
  let redis: RedisServer;
  let gateway: TestQueueGateway;
  let target: QueueTarget;

  beforeAll(async () => {
    redis = await startRedis();
    target = testQueueTarget(redis);
    gateway = await startTestQueueGateway({ config: testQueueConfig(), targets: [target], workers: false });
    // Connected once, so the failure is the database going away, not a bad address.
    await fetch(`${gateway.queueUrl(target)}/v2/dlq`, {
      headers: { authorization: `Bearer ${target.token}` },
    });
    await redis.stop();
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  // Asked together: each waits out the connection's command timeout, so one after another would take a minute.
  it('when each route is asked, then each is a 503 naming what did not happen', async () => {
    const cases = [
      ['GET', '/v2/messages/msg_1', /did not read the message/],
      ['DELETE', '/v2/messages/msg_1', /did not cancel the message/],
      ['DELETE', '/v2/messages?label=x', /did not cancel the messages/],
      ['GET', '/v2/dlq', /did not read the dead letters/],
      ['POST', '/v2/dlq/retry?dlqIds=1700000000000-0a0b0c0d', /did not read the dead letters/],
      ['GET', '/v2/events', /did not read the events/],
      ['GET', '/v2/logs', /did not read the events/],
      ['POST', '/v2/publish/https://a.example/x', /did not store the message/],
      ['POST', '/v2/batch', /did not store the message/, '[{"destination": "https://a.example/x"}]'],
      ['DELETE', '/v2/messages', /did not cancel the messages/, '{"messageIds": ["msg_1"]}'],
      ['GET', '/v2/dlq/1700000000000-0a0b0c0d', /did not /],
      ['DELETE', '/v2/dlq/1700000000000-0a0b0c0d', /did not /],
      ['POST', '/v2/dlq/retry/1700000000000-0a0b0c0d', /did not /],
      ['GET', '/v2/schedules', /did not list the schedules/],
      ['GET', '/v2/topics', /did not /],
    ] as const;
    const answers = await Promise.all(
      cases.map(async ([method, path, , body]) => {
        const response = await fetch(`${gateway.queueUrl(target)}${path}`, {
          method,
          headers: { authorization: `Bearer ${target.token}` },
          ...(body !== undefined && { body }),
        });
        return { status: response.status, error: ((await response.json()) as { error: string }).error };
      }),
    );
    for (const [i, [method, path, message]] of cases.entries())
      expect({ route: `${method} ${path}`, ...answers[i] }).toEqual({
        route: `${method} ${path}`,
        status: 503,
        error: expect.stringMatching(message),
      });
  }, 30_000);
});
