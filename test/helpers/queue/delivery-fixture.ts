import type { Redis } from 'ioredis';
import type winston from 'winston';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { createSilentLogger } from '../../../observability/logger.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import type { QueueConfig } from '../../../gateway/queue/core/config.js';
import { DeliveryWorker } from '../../../gateway/queue/workers/delivery-worker.js';
import { createHttpDeliverer, type Deliverer } from '../../../gateway/queue/workers/http-delivery.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { MessageStore } from '../../../gateway/queue/stores/message-store.js';
import { compileAddressPolicy } from '../../../gateway/queue/core/address-policy.js';
import { createGuardedAgents, type GuardedAgents } from '../../../gateway/queue/workers/guarded-agents.js';
import { testQueueConfig } from './queue-config.js';
import { connectAsGateway, connectTestRedis } from './redis-snapshot.js';
import { startRecordingDestination, type RecordingDestination } from './recording-destination.js';
import { testQueueTarget } from './test-queue-target.js';

export interface StartWorkerOptions {
  config: QueueConfig;
  /** Default: real HTTP through the fixture's loopback-only agents, no redirects followed. */
  deliverer?: Deliverer;
  logger?: winston.Logger;
  /** Default: the fixture's binding on its Redis. */
  target?: QueueTarget;
}

/** What the delivery-worker suites share; see {@link useDeliveryFixture}. */
export interface DeliveryFixture {
  readonly server: RedisServer;
  /** The test's own connection, for seeding and inspecting the database. */
  readonly redis: Redis;
  readonly destination: RecordingDestination;
  readonly target: QueueTarget;
  httpDeliverer(maxRedirects?: number): Deliverer;
  /** A queue configuration (and its store) under a key prefix of its own, so tests stay apart. */
  freshConfig(overrides?: Partial<QueueConfig>): { config: QueueConfig; store: MessageStore };
  /** A running worker on a connection set up as the gateway's; stopped after the test. */
  startWorker(options: StartWorkerOptions): { worker: DeliveryWorker; redis: Redis };
  /** A connection set up as the gateway's (blocking or not); closed after the test. */
  connectAsGateway(blocking: boolean): Redis;
}

/**
 * A real redis-server, a recording destination on 127.0.0.1 and SSRF-guarded agents that allow
 * loopback only, set up once per describe block (call it there). Workers and connections started
 * through it end after each test, and the destination answers 200 again.
 */
export function useDeliveryFixture(name: string): DeliveryFixture {
  let server: RedisServer;
  let redis: Redis;
  let destination: RecordingDestination;
  let agents: GuardedAgents;
  let target: QueueTarget;
  let prefix = 0;
  const workers: DeliveryWorker[] = [];
  const connections: Redis[] = [];

  beforeAll(async () => {
    server = await startRedis();
    redis = connectTestRedis(server);
    destination = await startRecordingDestination();
    agents = createGuardedAgents({ policy: compileAddressPolicy(['127.0.0.0/8']) });
    target = testQueueTarget(server);
  });
  afterAll(async () => {
    agents?.http.destroy();
    redis?.disconnect();
    await destination?.close();
    await server?.stop();
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((worker) => worker.stop(0)));
    for (const connection of connections.splice(0)) connection.disconnect();
    destination.requests.length = 0;
    destination.answer = () => ({ status: 200 });
  });

  const connect = (blocking: boolean): Redis => {
    const connection = connectAsGateway(server, { blocking });
    connections.push(connection);
    return connection;
  };
  const httpDeliverer = (maxRedirects = 0): Deliverer => createHttpDeliverer({ agents, maxRedirects });

  return {
    get server() {
      return server;
    },
    get redis() {
      return redis;
    },
    get destination() {
      return destination;
    },
    get target() {
      return target;
    },
    httpDeliverer,
    freshConfig(overrides = {}) {
      prefix += 1;
      const config = testQueueConfig({ keyPrefix: `{${name}-${prefix}}:`, ...overrides });
      return { config, store: new MessageStore(redis, queueKeys(config.keyPrefix)) };
    },
    startWorker(options) {
      const own = connect(false);
      const worker = new DeliveryWorker({
        target: options.target ?? target,
        redis: own,
        config: options.config,
        deliverer: options.deliverer ?? httpDeliverer(),
        logger: options.logger ?? createSilentLogger(),
      });
      workers.push(worker);
      worker.start();
      return { worker, redis: own };
    },
    connectAsGateway: connect,
  };
}
