import { Client } from '@upstash/qstash';
import type { Redis } from 'ioredis';
import type { ManagedProcess } from '../../../local/process.js';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/binding-registry.js';
import { QUEUE_CONFIG_DEFAULTS } from '../../../gateway/queue/config.js';
import { DELIVERY_GROUP, queueKeys } from '../../../gateway/queue/keys.js';
import { connectTestRedis } from '../../helpers/queue/redis-snapshot.js';
import {
  startRecordingDestination,
  type RecordingDestination,
} from '../../helpers/queue/recording-destination.js';
import { spawnQueueGateway, type QueueGatewayProcess } from '../../helpers/queue/spawn-queue-gateway.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';

const KEY_PREFIX = '{takeover-test}:';
const keys = queueKeys(KEY_PREFIX);
/** What the issue asks: a dead replica's deliveries move on within 10 s of its death. */
const TAKEOVER_LIMIT_MS = 10_000;

/**
 * Two gateway processes share a binding with the default lease (5 s) and reclaim idle time (60 s):
 * a SIGKILLed replica's deliveries are taken over by the survivor within 10 s, and a live replica
 * whose receiver takes longer than a lease to answer keeps its deliveries.
 */
describe('gateway replicas that watch each other’s consumer lease', () => {
  let redis: RedisServer;
  let inspect: Redis;
  let destination: RecordingDestination;
  let target: QueueTarget;
  const processes: ManagedProcess[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    inspect = connectTestRedis(redis);
    destination = await startRecordingDestination();
    target = testQueueTarget(redis);
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop(1_000)));
    inspect?.disconnect();
    await destination?.close();
    await redis?.stop();
  });

  async function startReplica(consumerName: string): Promise<QueueGatewayProcess> {
    const gateway = await spawnQueueGateway({
      targets: [target],
      env: {
        SETTEE_QUEUE_KEY_PREFIX: KEY_PREFIX,
        SETTEE_QUEUE_SSRF_ALLOW: '127.0.0.0/8',
        SETTEE_QUEUE_CONSUMER_NAME: consumerName,
        SETTEE_QUEUE_BLOCK_MS: '200',
        SETTEE_QUEUE_WORKER_CONCURRENCY: '16',
      },
    });
    processes.push(gateway.proc);
    return gateway;
  }

  function sdkClient(gateway: QueueGatewayProcess): Client {
    return new Client({
      baseUrl: `${gateway.baseUrl}/queue/ns/db`,
      token: target.token,
      retry: false,
      enableTelemetry: false,
    });
  }

  async function pendingOn(consumer: string): Promise<number> {
    const pending = (await inspect.xpending(
      keys.stream,
      DELIVERY_GROUP,
      '-',
      '+',
      1_000,
      consumer,
    )) as unknown[];
    return pending.length;
  }

  it('when a replica is SIGKILLed holding deliveries, then the survivor delivers them within 10 s, long before the reclaim idle time', async () => {
    expect(QUEUE_CONFIG_DEFAULTS.reclaimIdleMs).toBeGreaterThan(TAKEOVER_LIMIT_MS);
    destination.answer = () => 'hang';
    const dying = await startReplica('replica-dying');
    const client = sdkClient(dying);
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const { messageId } = await client.publishJSON({
        url: `${destination.baseUrl}/held/${i}`,
        body: { i },
      });
      ids.push(messageId);
    }
    await waitFor(
      'the dying replica to hold all 10 deliveries',
      async () => (destination.requests.length === 10 ? true : undefined),
      { timeoutMs: 10_000 },
    );
    expect(await pendingOn('replica-dying')).toBe(10);
    await startReplica('replica-survivor');
    destination.answer = () => ({ status: 200 });

    process.kill(dying.proc.pid, 'SIGKILL');
    expect(await dying.proc.exited).toBe('SIGKILL');
    const killedAt = Date.now();

    const redelivered = await waitFor(
      'every held message to be delivered again',
      async () => {
        const after = ids.map((id) => destination.attemptsOf(id).find((r) => r.at >= killedAt));
        return after.every((r) => r !== undefined) ? after.map((r) => r!) : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 50 },
    );
    const slowest = Math.max(...redelivered.map((r) => r.at - killedAt));
    expect(slowest).toBeLessThan(TAKEOVER_LIMIT_MS);
    // A crash is not a failed attempt.
    for (const request of redelivered) expect(request.headers['upstash-retried']).toBe('0');
    await waitFor(
      'the dead consumer to be forgotten',
      async () =>
        (await inspect.zscore(keys.consumerHeartbeats, 'replica-dying')) === null &&
        (await pendingOn('replica-dying')) === 0
          ? true
          : undefined,
      { timeoutMs: 10_000 },
    );
    await waitFor(
      'the stream to be empty',
      async () => ((await inspect.xlen(keys.stream)) === 0 ? true : undefined),
      { timeoutMs: 5_000 },
    );
  }, 60_000);

  it('when a live replica’s receiver takes longer than two leases to answer, then no other replica takes its deliveries', async () => {
    const slowMs = 2 * QUEUE_CONFIG_DEFAULTS.consumerLeaseMs + 1_000;
    expect(slowMs).toBeLessThan(QUEUE_CONFIG_DEFAULTS.deliveryTimeoutMs);
    const other = await startReplica('replica-other');
    destination.answer = (request) =>
      request.path.startsWith('/slow/') ? { status: 200, delayMs: slowMs } : { status: 200 };
    const client = sdkClient(other);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const { messageId } = await client.publishJSON({
        url: `${destination.baseUrl}/slow/${i}`,
        body: { i },
      });
      ids.push(messageId);
    }
    await waitFor(
      'every slow delivery to be answered',
      async () => ((await inspect.xlen(keys.stream)) === 0 ? true : undefined),
      { timeoutMs: slowMs + 15_000, intervalMs: 200 },
    );
    for (const id of ids) expect(destination.attemptsOf(id)).toHaveLength(1);
    expect(await inspect.llen(keys.deadLetters)).toBe(0);
  }, 60_000);
});
