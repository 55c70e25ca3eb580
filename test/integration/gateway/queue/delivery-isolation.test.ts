import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startRedis, type RedisServer } from '../../../../local/redis-server.js';
import { waitFor } from '../../../../local/wait.js';
import type { QueueTarget } from '../../../../gateway/queue/core/binding-registry.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../../helpers/queue/queue-config.js';
import { closeServer } from '../../../helpers/queue/test-receiver.js';
import { testQueueTarget } from '../../../helpers/queue/test-queue-target.js';

const CONCURRENCY = 4;

/**
 * Two tenants' bindings delivering to one destination host: one tenant's deliveries held by a slow
 * receiver must not hold the other's. Each binding has its own sockets (up to the worker's
 * concurrency) for a destination; agents shared by the bindings would queue B behind A.
 */
describe("a binding's deliveries to a host do not wait behind another binding's to the same host", () => {
  let redis: RedisServer;
  let gateway: TestQueueGateway;
  let receiver: http.Server;
  let a: QueueTarget;
  let b: QueueTarget;
  const held: http.ServerResponse[] = [];
  let bReceived = 0;

  beforeAll(async () => {
    redis = await startRedis();
    a = testQueueTarget(redis, { name: 'a', db: 0 });
    b = testQueueTarget(redis, { name: 'b', db: 1 });
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url === '/slow') held.push(res);
        else {
          bReceived += 1;
          res.writeHead(200, { 'content-length': '0' }).end();
        }
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    gateway = await startTestQueueGateway({
      // Held deliveries must not time out (and free their sockets) within the test.
      config: testQueueConfig({
        workerConcurrency: CONCURRENCY,
        deliveryTimeoutMs: 120_000,
        reclaimIdleMs: 180_000,
      }),
      targets: [a, b],
    });
  });
  afterAll(async () => {
    for (const res of held) res.end();
    await gateway?.stop();
    await closeServer(receiver);
    await redis?.stop();
  });

  const publish = async (target: QueueTarget, path: string): Promise<void> => {
    const port = (receiver.address() as AddressInfo).port;
    const response = await fetch(`${gateway.queueUrl(target)}/v2/publish/http://127.0.0.1:${port}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${target.token}` },
      body: 'x',
    });
    expect(response.status).toBe(201);
  };

  it("when A's receiver holds every one of A's deliveries in flight, then B's delivery to the same host still arrives", async () => {
    for (let i = 0; i < CONCURRENCY; i++) await publish(a, '/slow');
    await waitFor(
      'A holding all its delivery slots',
      async () => (held.length === CONCURRENCY ? true : undefined),
      {
        timeoutMs: 25_000,
        intervalMs: 50,
      },
    );
    await publish(b, '/fast');
    await waitFor("B's delivery", async () => (bReceived === 1 ? true : undefined), {
      timeoutMs: 25_000,
      intervalMs: 50,
    });
    // A's were still held all along: B did not get in by A's sockets coming free.
    expect(held.every((res) => !res.writableEnded)).toBe(true);
  });
});
