import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { concretePath, queueApiRouteTable } from '../../helpers/queue/api-route-table.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import { connectTestRedis, snapshotDatabase } from '../../helpers/queue/redis-snapshot.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';

/**
 * Every route the gateway serves that asks for a token, and each method it takes, from its own
 * table: it cannot fall behind. A public route (a workflow's webhook, called by an outside system
 * with any method and no token) is checked in sdk-workflow-webhooks.test.ts.
 */
const TOKEN_ROUTES = queueApiRouteTable().filter((route) => route.public !== true);
const ROUTES = TOKEN_ROUTES.flatMap((route) =>
  Object.keys(route.methods).map((method) => ({ route, method, path: concretePath(route.path) })),
);

/** No route that asks for a token takes PUT (checked below), so it is a wrong method on every one of them. */
const WRONG_METHOD = 'PUT';

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
  let rotations = 0;

  beforeAll(async () => {
    [redis, otherRedis] = await Promise.all([startRedis(), startRedis()]);
    target = testQueueTarget(redis, { namespace: 'tenant-a', name: 'cache' });
    otherTarget = testQueueTarget(otherRedis, { namespace: 'tenant-b', name: 'cache' });
    inspect = connectTestRedis(redis);
    gateway = await startTestQueueGateway({
      config: testQueueConfig(),
      targets: [target, otherTarget],
      workers: false,
      // POST /v2/keys/rotate is served only with a writer; a refused request must never reach it.
      rotationWriter: async () => {
        rotations += 1;
      },
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

  it('when the table is read from the router, then it holds every route of the issue (queues, enqueue, flow control, keys, URL groups, schedules)', () => {
    const paths = new Set(ROUTES.map((r) => `${r.method} ${r.route.path}`));
    for (const expected of [
      'POST queues',
      'GET queues/:name',
      'POST queues/:name/pause',
      'POST enqueue/:queue/*destination',
      'GET flowControl',
      'POST flowControl/:key/resetRate',
      'GET globalParallelism',
      'GET keys',
      'POST keys/rotate',
      'DELETE topics/:name/endpoints',
      'POST schedules/:id/resume',
      'PATCH schedules/:id/pause',
    ])
      expect(paths).toContain(expected);
    expect(ROUTES.map((r) => r.method)).not.toContain(WRONG_METHOD);
  });

  it("when each route is asked with another binding's token or none, then each is a 401 and the database is unchanged", async () => {
    const before = await snapshotDatabase(inspect);
    expect(otherTarget.token).not.toBe(target.token);
    for (const { method, path } of ROUTES) {
      for (const token of [otherTarget.token, undefined]) {
        const response = await ask(method, path, token, method === 'GET' ? undefined : '{}');
        const answer = (await response.json()) as { error: string };
        expect({ route: `${method} ${path}`, status: response.status, keys: Object.keys(answer) }).toEqual({
          route: `${method} ${path}`,
          status: 401,
          keys: ['error'],
        });
      }
    }
    expect(await snapshotDatabase(inspect)).toEqual(before);
    expect(rotations).toBe(0);
  });

  it('when each route is asked with a method it does not take, then it is a 405 whose Allow names every method it takes', async () => {
    for (const route of TOKEN_ROUTES) {
      const path = concretePath(route.path);
      const response = await ask(WRONG_METHOD, path, target.token);
      const answer = (await response.json()) as { error: string };
      expect({ route: path, status: response.status, error: answer.error }).toEqual({
        route: path,
        status: 405,
        error: expect.stringMatching(/method not allowed/),
      });
      const allow = response.headers.get('allow')?.split(', ') ?? [];
      for (const method of Object.keys(route.methods))
        expect({ route: path, allow }).toEqual({ route: path, allow: expect.arrayContaining([method]) });
    }
  });
});
