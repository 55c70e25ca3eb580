import type { Redis } from 'ioredis';
import { DeliveryWorker } from '../../../../gateway/queue/delivery-worker.js';
import { createHttpDeliverer } from '../../../../gateway/queue/http-delivery.js';
import { queueKeys } from '../../../../gateway/queue/keys.js';
import { createMessage } from '../../../../gateway/queue/message.js';
import { MessageStore } from '../../../../gateway/queue/message-store.js';
import { compileAddressPolicy } from '../../../../gateway/queue/ssrf/address-policy.js';
import { createGuardedAgents, type GuardedAgents } from '../../../../gateway/queue/ssrf/guarded-agents.js';
import { startRedis, type RedisServer } from '../../../../local/redis-server.js';
import { waitFor } from '../../../../local/wait.js';
import { createSilentLogger } from '../../../../observability/logger.js';
import { testQueueConfig } from '../../../helpers/queue/queue-config.js';
import {
  startRecordingDestination,
  type RecordingDestination,
} from '../../../helpers/queue/recording-destination.js';
import { connectAsGateway } from '../../../helpers/queue/redis-snapshot.js';
import { testQueueTarget } from '../../../helpers/queue/test-queue-target.js';
import { TcpForwarder } from '../../../helpers/tcp-forwarder.js';

/** database-connections.ts's grace after a read's BLOCK time. */
const BLOCKING_REPLY_GRACE_MS = 1_000;
const BLOCK_MS = 200;

describe("a delivery worker's blocking connection", () => {
  let server: RedisServer;
  let forwarder: TcpForwarder;
  let redis: Redis;
  let destination: RecordingDestination;
  let agents: GuardedAgents;
  let worker: DeliveryWorker | undefined;

  beforeAll(async () => {
    server = await startRedis();
    destination = await startRecordingDestination();
    agents = createGuardedAgents({ policy: compileAddressPolicy(['127.0.0.0/8']) });
  });
  afterAll(async () => {
    agents.http.destroy();
    await destination.close();
    await server.stop();
  });
  beforeEach(async () => {
    forwarder = await TcpForwarder.start(`redis://${server.host}:${server.port}`);
    redis = connectAsGateway(server, { blocking: false });
  });
  afterEach(async () => {
    await worker?.stop(0);
    redis.disconnect();
    await forwarder.cut();
  });

  it('when it goes silent without closing (half-open), then the worker gives up its read, reconnects and delivers what is published after', async () => {
    // Reclaiming would deliver a message a lost read had claimed; it must not be what saves it here.
    const config = testQueueConfig({ keyPrefix: '{half-open}:', blockMs: BLOCK_MS, reclaimIdleMs: 600_000 });
    const store = new MessageStore(redis, queueKeys(config.keyPrefix));
    // Only the blocking connection goes through the relay: the shared one stays direct.
    const target = testQueueTarget(server);
    target.connection = { ...target.connection, host: '127.0.0.1', port: forwarder.port };
    worker = new DeliveryWorker({
      target,
      redis,
      config,
      deliverer: createHttpDeliverer({ agents, maxRedirects: 0 }),
      logger: createSilentLogger(),
    });
    worker.start();
    const message = (n: number) =>
      createMessage({
        destination: `${destination.baseUrl}/half-open/${n}`,
        method: 'POST',
        headers: {},
        body: Buffer.from(`message ${n}`),
        retries: 0,
      });
    await store.enqueue([message(1)]);
    await waitFor('the first delivery', async () => (destination.requests.length === 1 ? true : undefined), {
      timeoutMs: 5_000,
    });

    forwarder.freeze();
    const frozenAt = Date.now();
    // Published while the worker's read waits on the silent connection.
    await new Promise((resolve) => setTimeout(resolve, BLOCK_MS));
    await store.enqueue([message(2)]);
    await waitFor(
      'the delivery after the freeze',
      async () => (destination.requests.length === 2 ? true : undefined),
      {
        timeoutMs: 10_000,
      },
    );
    const recoveredMs = Date.now() - frozenAt;
    expect(destination.requests.map((r) => r.path)).toEqual(['/half-open/1', '/half-open/2']);
    // At most: the read in flight settles empty, one more read on the dead connection while it is
    // replaced, and that read settles empty too.
    expect(recoveredMs).toBeLessThan(2 * (BLOCK_MS + BLOCKING_REPLY_GRACE_MS) + 1_000);
    // And the new connection keeps working.
    await store.enqueue([message(3)]);
    await waitFor(
      'a delivery on the new connection',
      async () => (destination.requests.length === 3 ? true : undefined),
      {
        timeoutMs: 5_000,
      },
    );
  });
});
