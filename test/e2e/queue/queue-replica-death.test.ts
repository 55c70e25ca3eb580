import { Client } from '@upstash/qstash';
import type { Redis } from 'ioredis';
import type { ManagedProcess } from '../../../local/process.js';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/binding-registry.js';
import { queueKeys } from '../../../gateway/queue/keys.js';
import { connectTestRedis } from '../../helpers/queue/redis-snapshot.js';
import {
  startRecordingDestination,
  type RecordingDestination,
} from '../../helpers/queue/recording-destination.js';
import { spawnQueueGateway, type QueueGatewayProcess } from '../../helpers/queue/spawn-queue-gateway.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';

const KEY_PREFIX = '{queue-death-test}:';
const keys = queueKeys(KEY_PREFIX);

/**
 * A queue's slot is held by its message, not by the replica delivering it: when that replica is
 * SIGKILLed mid-delivery, the survivor takes the entry over with the consumer lease, delivers it,
 * and only then starts the next message, so order and parallelism hold across the death and no
 * slot is leaked.
 */
describe('a queue whose delivering replica dies', () => {
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
        SETTEE_QUEUE_POLL_INTERVAL_MS: '100',
      },
    });
    processes.push(gateway.proc);
    return gateway;
  }

  it('when the replica delivering the head of a parallelism-1 queue is SIGKILLed, then the survivor delivers it again before the next, and the slot count ends at zero', async () => {
    destination.answer = () => 'hang';
    const dying = await startReplica('queue-replica-dying');
    const client = new Client({
      baseUrl: `${dying.baseUrl}/queue/ns/db`,
      token: target.token,
      retry: false,
      enableTelemetry: false,
    });
    const queue = client.queue({ queueName: 'serial' });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (await queue.enqueueJSON({ url: `${destination.baseUrl}/serial/${i}`, body: { i } })).messageId,
      );
    await waitFor(
      'the dying replica to hold the first delivery',
      async () => destination.requests.length === 1 || undefined,
      {
        timeoutMs: 10_000,
      },
    );
    expect(await inspect.smembers(keys.queueActive('serial'))).toEqual([ids[0]]);

    await startReplica('queue-replica-survivor');
    destination.answer = () => ({ status: 200 });
    process.kill(dying.proc.pid, 'SIGKILL');
    expect(await dying.proc.exited).toBe('SIGKILL');

    await waitFor(
      'all three messages delivered after the death',
      async () => (destination.requests.length >= 4 ? true : undefined),
      { timeoutMs: 25_000, intervalMs: 50 },
    );
    // The head was sent twice (the dead replica's attempt, then the survivor's), and only then the rest, in order.
    expect(destination.requests.map((r) => r.headers['upstash-message-id'])).toEqual([
      ids[0],
      ids[0],
      ids[1],
      ids[2],
    ]);
    await waitFor(
      'the slot count back to zero',
      async () => ((await inspect.scard(keys.queueActive('serial'))) === 0 ? true : undefined),
      { timeoutMs: 5_000 },
    );
    expect(await inspect.llen(keys.queueWaiting('serial'))).toBe(0);
  }, 60_000);
});
