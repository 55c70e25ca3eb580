import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import type { QueueTarget } from '../../../gateway/queue/bindings/binding-registry.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import { connectTestRedis, snapshotDatabase } from '../../helpers/queue/redis-snapshot.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';

const DLQ_ID = '1700000000000-0a0b0c0d';

/** Every route of a message's life, with a body where the route reads one. */
const ROUTES: readonly [method: string, path: string, body?: string][] = [
  ['POST', '/v2/publish/https://a.example/x', '{}'],
  ['POST', '/v2/batch', '[{"destination": "https://a.example/x"}]'],
  ['DELETE', '/v2/messages', '{"messageIds": ["msg_1"]}'],
  ['GET', '/v2/messages/msg_1'],
  ['DELETE', '/v2/messages/msg_1'],
  ['GET', '/v2/dlq'],
  ['DELETE', '/v2/dlq?dlqIds=' + DLQ_ID],
  ['POST', '/v2/dlq/retry?dlqIds=' + DLQ_ID],
  ['POST', `/v2/dlq/retry/${DLQ_ID}`],
  ['GET', `/v2/dlq/${DLQ_ID}`],
  ['DELETE', `/v2/dlq/${DLQ_ID}`],
  ['GET', '/v2/events'],
  ['GET', '/v2/logs'],
  ['GET', '/v2/topics'],
  ['GET', '/v2/topics/orders'],
  ['DELETE', '/v2/topics/orders'],
  ['POST', '/v2/topics/orders/endpoints', '{"endpoints": [{"url": "https://a.example/x"}]}'],
  ['GET', '/v2/schedules'],
  ['POST', '/v2/schedules/https://a.example/x', 'x'],
  ['GET', '/v2/schedules/scd_x'],
  ['DELETE', '/v2/schedules/scd_x'],
  ['PATCH', '/v2/schedules/scd_x/pause'],
  ['PATCH', '/v2/schedules/scd_x/resume'],
];

/** A known path asked with a method it does not take, and a method it does. */
const WRONG_METHODS: readonly [method: string, path: string, allowed: string][] = [
  ['PUT', '/v2/publish/https://a.example/x', 'POST'],
  ['GET', '/v2/batch', 'POST'],
  ['GET', '/v2/messages', 'DELETE'],
  ['PUT', '/v2/messages/msg_1', 'GET'],
  ['PUT', '/v2/dlq', 'GET'],
  ['GET', '/v2/dlq/retry', 'POST'],
  ['GET', `/v2/dlq/retry/${DLQ_ID}`, 'POST'],
  ['POST', `/v2/dlq/${DLQ_ID}`, 'DELETE'],
  ['DELETE', '/v2/events', 'GET'],
  ['POST', '/v2/logs', 'GET'],
  ['PUT', '/v2/topics/orders', 'GET'],
  ['PUT', '/v2/schedules/scd_x', 'GET'],
  ['GET', '/v2/schedules/scd_x/pause', 'PATCH'],
];

/**
 * Every route of the API, refused the same way: another binding's real token (tenant-b's
 * database password) or no token is a 401 that changes nothing, and a method the route does not
 * take is a 405 naming the ones it does (Allow), as QStash answers.
 */
describe('every queue route with the wrong credentials or method', () => {
  let redis: RedisServer;
  let otherRedis: RedisServer;
  let gateway: TestQueueGateway;
  let target: QueueTarget;
  let otherTarget: QueueTarget;
  let inspect: Redis;

  beforeAll(async () => {
    [redis, otherRedis] = await Promise.all([startRedis(), startRedis()]);
    target = testQueueTarget(redis, { namespace: 'tenant-a', name: 'cache' });
    otherTarget = testQueueTarget(otherRedis, { namespace: 'tenant-b', name: 'cache' });
    inspect = connectTestRedis(redis);
    gateway = await startTestQueueGateway({
      config: testQueueConfig(),
      targets: [target, otherTarget],
      workers: false,
    });
    // Something stored, so "unchanged" is checked against a database with queue keys in it.
    const stored = await ask('POST', '/v2/publish/https://a.example/seed', target.token, '{}');
    expect(stored.status).toBe(201);
  });

  afterAll(async () => {
    await gateway?.stop();
    inspect?.disconnect();
    await Promise.all([redis?.stop(), otherRedis?.stop()]);
  });

  function ask(method: string, path: string, token: string | undefined, body?: string): Promise<Response> {
    return fetch(`${gateway.queueUrl(target)}${path}`, {
      method,
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      ...(body !== undefined && { body }),
    });
  }

  it("when each route is asked with another binding's token or none, then each is a 401 and the database is unchanged", async () => {
    const before = await snapshotDatabase(inspect);
    expect(otherTarget.token).not.toBe(target.token);
    for (const [method, path, body] of ROUTES) {
      for (const token of [otherTarget.token, undefined]) {
        const response = await ask(method, path, token, body);
        const answer = (await response.json()) as { error: string };
        expect({ route: `${method} ${path}`, status: response.status, keys: Object.keys(answer) }).toEqual({
          route: `${method} ${path}`,
          status: 401,
          keys: ['error'],
        });
      }
    }
    expect(await snapshotDatabase(inspect)).toEqual(before);
  });

  it('when a route is asked with a method it does not take, then it is a 405 whose Allow names the methods it takes', async () => {
    for (const [method, path, allowed] of WRONG_METHODS) {
      const response = await ask(method, path, target.token);
      const answer = (await response.json()) as { error: string };
      expect({ route: `${method} ${path}`, status: response.status }).toEqual({
        route: `${method} ${path}`,
        status: 405,
      });
      expect(response.headers.get('allow')?.split(', ')).toContain(allowed);
      expect(answer.error).toMatch(/method not allowed/);
    }
  });
});
