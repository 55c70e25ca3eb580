import type { Client } from '@upstash/qstash';
import type { Redis } from 'ioredis';
import type { ManagedProcess } from '../../../local/process.js';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { connectTestRedis } from './redis-snapshot.js';
import { startRecordingDestination, type RecordingDestination } from './recording-destination.js';
import { spawnQueueGateway, type QueueGatewayProcess } from './spawn-queue-gateway.js';
import { testQueueTarget } from './test-queue-target.js';
import { queueSdkClient } from './queue-sdk-client.js';
import { deliveredPastThis } from './delivered-past-this.js';

/**
 * Gateway processes sharing one binding on a real Redis, for suites that SIGKILL one replica and
 * watch another take over. The fields are set once the suite's beforeAll has run.
 */
export interface QueueReplicas {
  redis: RedisServer;
  inspect: Redis;
  destination: RecordingDestination;
  target: QueueTarget;
  /** With `otherTenant`: another tenant's binding on a Redis of its own, served by every replica too. */
  otherTarget: QueueTarget | undefined;
  /** A replica of its own process, under `consumerName`, stopped after the suite. */
  startReplica(consumerName: string): Promise<QueueGatewayProcess>;
  /**
   * The official SDK against one replica, with the SDK's own retries off: the binding's URL and
   * token unless `as` names another binding's URL or token.
   */
  sdkClient(gateway: QueueGatewayProcess, as?: { target?: QueueTarget; token?: string }): Client;
  /** {@link deliveredPastThis} through `clients` (one per replica) to the recording destination. */
  deliveredPastThis(clients: readonly Client[]): Promise<void>;
}

/**
 * Registers the suite's beforeAll/afterAll: Redis, a recording destination and a binding are
 * started before the tests and, with every replica started meanwhile, stopped after them.
 * `env` (SETTEE_QUEUE_*) configures every replica beside its key prefix and consumer name.
 */
export function useQueueReplicas(options: {
  keyPrefix: string;
  env: Record<string, string>;
  otherTenant?: boolean;
}): QueueReplicas {
  const processes: ManagedProcess[] = [];
  let otherRedis: RedisServer | undefined;
  const replicas = {
    async startReplica(consumerName: string): Promise<QueueGatewayProcess> {
      const gateway = await spawnQueueGateway({
        targets: replicas.otherTarget ? [replicas.target, replicas.otherTarget] : [replicas.target],
        env: {
          SETTEE_QUEUE_KEY_PREFIX: options.keyPrefix,
          SETTEE_QUEUE_SSRF_ALLOW: '127.0.0.0/8',
          SETTEE_QUEUE_CONSUMER_NAME: consumerName,
          ...options.env,
        },
      });
      processes.push(gateway.proc);
      return gateway;
    },
    sdkClient(gateway: QueueGatewayProcess, as: { target?: QueueTarget; token?: string } = {}): Client {
      const target = as.target ?? replicas.target;
      return queueSdkClient(gateway, target, as.token);
    },
    deliveredPastThis: (clients: readonly Client[]) =>
      deliveredPastThis({
        clients,
        url: `${replicas.destination.baseUrl}/past-this`,
        received: replicas.destination.requests,
        isPast: (r) => r.path === '/past-this',
      }),
  } as QueueReplicas;

  beforeAll(async () => {
    replicas.redis = await startRedis();
    replicas.inspect = connectTestRedis(replicas.redis);
    replicas.destination = await startRecordingDestination();
    replicas.target = testQueueTarget(replicas.redis);
    if (options.otherTenant) {
      otherRedis = await startRedis();
      replicas.otherTarget = testQueueTarget(otherRedis, { namespace: 'tenant-b', name: 'cache' });
    }
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop(1_000)));
    replicas.inspect?.disconnect();
    await replicas.destination?.close();
    await Promise.all([replicas.redis?.stop(), otherRedis?.stop()]);
  });
  return replicas;
}
