import type { Client } from '@upstash/qstash';
import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueLimits, QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import type { QueueConfig } from '../../../gateway/queue/core/config.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { startTestQueueGateway, type TestQueueGateway } from './queue-gateway.js';
import { testQueueConfig } from './queue-config.js';
import { connectTestRedis } from './redis-snapshot.js';
import { randomSigningKey } from './signing-keys.js';
import { testQueueTarget } from './test-queue-target.js';
import { startTestReceiver, type RecordedDelivery, type TestReceiver } from './test-receiver.js';
import { InFlightGauge } from './in-flight-gauge.js';
import { queueSdkClient } from './queue-sdk-client.js';
import { deliveredPastThis } from './delivered-past-this.js';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What the SDK queue suites share; see {@link useSdkQueueSuite}. */
export interface SdkQueueSuite {
  /** The replicas' configuration but for their consumer names (key prefix, intervals). */
  readonly config: QueueConfig;
  /** replica-a and replica-b, each serving `target` and `otherTarget`. */
  readonly replicas: TestQueueGateway[];
  readonly receiver: TestReceiver;
  /** tenant-a's binding: at most 4 queues, parallelism at most 8. */
  readonly target: QueueTarget;
  /** tenant-b's binding, on a Redis of its own. */
  readonly otherTarget: QueueTarget;
  /** The test's own connection to `target`'s Redis. */
  readonly inspect: Redis;
  /** The deliveries {@link holdDeliveries} holds now, and the most it held at once in this test. */
  readonly inFlight: InFlightGauge;
  /** The official SDK against one replica, with the SDK's own retries off. */
  client(replica?: number, token?: string): Client;
  /** Answers each delivery after `holdMs`, counting how many are held at once. */
  holdDeliveries(holdMs: number, status?: (d: RecordedDelivery) => number): void;
  /** The bodies the receiver got, in arrival order. */
  bodies(): string[];
  /** Waits until the receiver got at least `count` deliveries. */
  delivered(count: number, timeoutMs?: number): Promise<true>;
  /** {@link deliveredPastThis} through both replicas to this suite's receiver. */
  deliveredPastThis(): Promise<void>;
}

/** Where {@link SdkQueueSuite.deliveredPastThis} sends its messages. */
const PAST_THIS_PATH = '/past-this';

/**
 * Registers the suite's hooks: two Redis servers, a receiver checking tenant-a's signing key and
 * two gateway replicas (each its own consumer in the group, sharing the database's slot counts)
 * for the suite; before each test, no delivery held, the receiver answering 200 and no queue left.
 */
export function useSdkQueueSuite(
  options: {
    /** tenant-a's limits besides its queue ones (a workflow run's, say). */
    limits?: Partial<QueueLimits>;
    /** The replicas' settings besides the test defaults. */
    config?: Partial<QueueConfig>;
  } = {},
): SdkQueueSuite {
  const config = testQueueConfig(options.config);
  let redis: RedisServer;
  let otherRedis: RedisServer;
  let replicas: TestQueueGateway[];
  let receiver: TestReceiver;
  let target: QueueTarget;
  let otherTarget: QueueTarget;
  let inspect: Redis;
  const inFlight = new InFlightGauge();

  const client = (replica = 0, token = target.token): Client =>
    queueSdkClient(replicas[replica]!, target, token);

  beforeAll(async () => {
    [redis, otherRedis] = await Promise.all([startRedis(), startRedis()]);
    const signingKey = randomSigningKey();
    target = testQueueTarget(redis, {
      namespace: 'tenant-a',
      name: 'cache',
      signingKey,
      limits: { maxQueues: 4, maxQueueParallelism: 8, ...options.limits },
    });
    otherTarget = testQueueTarget(otherRedis, { namespace: 'tenant-b', name: 'cache' });
    receiver = await startTestReceiver({ currentSigningKey: signingKey });
    inspect = connectTestRedis(redis);
    replicas = await Promise.all(
      ['replica-a', 'replica-b'].map((consumerName) =>
        startTestQueueGateway({
          config: testQueueConfig({ ...options.config, consumerName }),
          targets: [target, otherTarget],
        }),
      ),
    );
    // The replicas' delivery workers are running once the binding's mover holds its lease: a test
    // that snapshots the database first must not see the lease appear while it runs.
    const moverLease = queueKeys(config.keyPrefix).moverLease;
    await waitFor(
      'the mover lease taken',
      async () => (await inspect.exists(moverLease)) === 1 || undefined,
      {
        timeoutMs: 10_000,
        intervalMs: 20,
      },
    );
  });

  afterAll(async () => {
    await Promise.all((replicas ?? []).map((replica) => replica.stop()));
    await receiver?.close();
    inspect?.disconnect();
    await Promise.all([redis?.stop(), otherRedis?.stop()]);
  });

  beforeEach(async () => {
    // A delivery still held by the previous test would count down after the reset below.
    await waitFor('no delivery held', async () => inFlight.current === 0 || undefined, { timeoutMs: 5_000 });
    receiver.deliveries.length = 0;
    receiver.respond = () => 200;
    inFlight.reset();
    for (const queue of await client().queue().list())
      await client().queue({ queueName: queue.name }).delete();
  });

  return {
    config,
    get replicas() {
      return replicas;
    },
    get receiver() {
      return receiver;
    },
    get target() {
      return target;
    },
    get otherTarget() {
      return otherTarget;
    },
    get inspect() {
      return inspect;
    },
    inFlight,
    client,
    holdDeliveries(holdMs, status = () => 200) {
      receiver.respond = async (delivery) => {
        await inFlight.heldFor(holdMs);
        return status(delivery);
      };
    },
    bodies: () => receiver.deliveries.map((d) => d.body.toString()),
    delivered: (count, timeoutMs = 20_000) =>
      waitFor(`${count} deliveries`, async () => receiver.deliveries.length >= count || undefined, {
        timeoutMs,
        intervalMs: 20,
      }),
    deliveredPastThis: () =>
      deliveredPastThis({
        clients: replicas.map((_, replica) => client(replica)),
        url: `${receiver.baseUrl}${PAST_THIS_PATH}`,
        received: receiver.deliveries,
        isPast: (d) => new URL(d.url).pathname === PAST_THIS_PATH,
      }),
  };
}
