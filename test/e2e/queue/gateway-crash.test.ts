import type { Redis } from 'ioredis';
import type { ManagedProcess } from '../../../local/process.js';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { DELIVERY_GROUP, queueKeys } from '../../../gateway/queue/core/keys.js';
import { connectTestRedis } from '../../helpers/queue/redis-snapshot.js';
import {
  startRecordingDestination,
  type RecordingDestination,
} from '../../helpers/queue/recording-destination.js';
import { spawnQueueGateway, type QueueGatewayProcess } from '../../helpers/queue/spawn-queue-gateway.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';
import { queueSdkClient } from '../../helpers/queue/queue-sdk-client.js';

const MESSAGES = 1_000;
const KEY_PREFIX = '{crash-test}:';

/**
 * The queue's durability promise, with a real SIGKILL: a gateway process dies in the middle of
 * delivering 1,000 messages, a new one starts, and every message still reaches the destination
 * at least once. (The process is the queue handler and workers of test/helpers/queue; the
 * bindings are given to it directly instead of through the Kubernetes API.)
 */
describe('a gateway killed with SIGKILL mid-run', () => {
  let redis: RedisServer;
  let inspect: Redis;
  let destination: RecordingDestination;
  let target: QueueTarget;
  let lifecycleTarget: QueueTarget;
  const processes: ManagedProcess[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    inspect = connectTestRedis(redis);
    destination = await startRecordingDestination();
    target = testQueueTarget(redis);
    lifecycleTarget = testQueueTarget(redis, { name: 'lifecycle', db: 1 });
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop(1_000)));
    inspect?.disconnect();
    await destination?.close();
    await redis?.stop();
  });

  async function startGateway(): Promise<QueueGatewayProcess> {
    const gateway = await spawnQueueGateway({
      targets: [target, lifecycleTarget],
      env: {
        SETTEE_QUEUE_KEY_PREFIX: KEY_PREFIX,
        SETTEE_QUEUE_SSRF_ALLOW: '127.0.0.0/8',
        SETTEE_QUEUE_DELIVERY_TIMEOUT_MS: '1000',
        SETTEE_QUEUE_RECLAIM_IDLE_MS: '1500',
        SETTEE_QUEUE_POLL_INTERVAL_MS: '100',
        SETTEE_QUEUE_BLOCK_MS: '200',
        SETTEE_QUEUE_WORKER_CONCURRENCY: '16',
      },
    });
    processes.push(gateway.proc);
    return gateway;
  }

  it('when the process is killed during a 1,000-message run and restarted, then every message is delivered at least once', async () => {
    destination.answer = () => ({ status: 200, delayMs: 5 });
    const first = await startGateway();
    const client = queueSdkClient(first, target);
    const ids: string[] = [];
    for (let batch = 0; batch < MESSAGES / 100; batch++) {
      const results = await client.batchJSON(
        Array.from({ length: 100 }, (_, i) => ({
          url: `${destination.baseUrl}/crash/${batch * 100 + i}`,
          body: { n: batch * 100 + i },
        })),
      );
      ids.push(...results.map((r) => (r as { messageId: string }).messageId));
    }
    expect(new Set(ids).size).toBe(MESSAGES);

    await waitFor(
      'some deliveries before the kill',
      async () => (destination.requests.length >= 150 ? true : undefined),
      {
        timeoutMs: 30_000,
      },
    );
    // Held answers (under the 1 s delivery timeout) keep deliveries in flight, so the kill lands
    // mid-delivery: with 5 ms answers a loaded machine could kill between a batch's acks and the
    // next read, with nothing pending.
    destination.answer = () => ({ status: 200, delayMs: 800 });
    await waitFor(
      'deliveries in flight',
      async () => {
        const [pending] = (await inspect.xpending(queueKeys(KEY_PREFIX).stream, DELIVERY_GROUP)) as [number];
        return pending > 0 ? true : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 2 },
    );
    process.kill(first.proc.pid, 'SIGKILL');
    expect(await first.proc.exited).toBe('SIGKILL');
    const deliveriesAtKill = destination.requests.length;
    const deliveredBeforeKill = new Set(
      destination.requests.map((r) => String(r.headers['upstash-message-id'])),
    ).size;
    expect(deliveredBeforeKill).toBeLessThan(MESSAGES);
    const pendingAfterKill = (await inspect.xpending(queueKeys(KEY_PREFIX).stream, DELIVERY_GROUP)) as [
      number,
    ];
    expect(pendingAfterKill[0]).toBeGreaterThan(0);
    // Dead means dead: nothing arrives until the new process starts.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(destination.requests.length).toBe(deliveriesAtKill);

    destination.answer = () => ({ status: 200, delayMs: 5 });
    await startGateway();
    const delivered = await waitFor(
      'every message to be delivered',
      async () => {
        const seen = new Set(destination.requests.map((r) => String(r.headers['upstash-message-id'])));
        return ids.every((id) => seen.has(id)) ? seen : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(delivered.size).toBe(MESSAGES);
    await waitFor(
      'the stream to be empty',
      async () => ((await inspect.xlen(queueKeys(KEY_PREFIX).stream)) === 0 ? true : undefined),
      {
        timeoutMs: 10_000,
      },
    );
    expect(await inspect.hlen(queueKeys(KEY_PREFIX).deadLetters)).toBe(0);
    // Two gateway processes started (30 s each at most) and waits of 30, 60 and 10 s.
  }, 180_000);

  it('when the process is killed with delayed, cancelled, dead-lettered and retried-from-DLQ messages about, then each ends as promised', async () => {
    const lifecycleKeys = queueKeys(KEY_PREFIX);
    const lifecycleRedis = connectTestRedis(redis, 1);
    try {
      // Paths under /fail/ fail until /fail/ is healed; /retried/ answers 200.
      let failing = true;
      destination.answer = (request) =>
        request.path.startsWith('/fail/') && failing ? { status: 500 } : { status: 200, delayMs: 5 };
      const first = await startGateway();
      const clientOf = (baseUrl: string) => queueSdkClient({ baseUrl }, lifecycleTarget);
      const client = clientOf(first.baseUrl);
      const publish = async (count: number, item: (i: number) => Record<string, unknown>) => {
        const results = await client.batchJSON(
          Array.from(
            { length: count },
            (_, i) => ({ body: { i }, ...item(i) }) as { url: string; body: unknown },
          ),
        );
        return results.map((r) => (r as { messageId: string }).messageId);
      };
      const deadIds = await publish(50, (i) => ({ url: `${destination.baseUrl}/fail/${i}`, retries: 0 }));
      const letters = await waitFor(
        'the dead letters',
        async () => {
          const { messages } = await client.dlq.listMessages({ count: 100 });
          return messages.length === 50 ? messages : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 50 },
      );
      const cancelledIds = await publish(50, (i) => ({
        url: `${destination.baseUrl}/cancelled/${i}`,
        delay: '1h',
      }));
      const delayedIds = await publish(100, (i) => ({
        url: `${destination.baseUrl}/delayed/${i}`,
        delay: 1,
      }));
      const queuedIds = await publish(100, (i) => ({ url: `${destination.baseUrl}/queued/${i}` }));
      expect(await client.messages.cancel(cancelledIds)).toEqual({ cancelled: 50 });
      failing = false;
      const retried = await client.dlq.retry(letters.slice(0, 25).map((l) => l.dlqId));
      expect(retried.responses).toHaveLength(25);

      await waitFor(
        'some deliveries before the kill',
        async () => (destination.requests.length >= 100 ? true : undefined),
        { timeoutMs: 30_000, intervalMs: 20 },
      );
      process.kill(first.proc.pid, 'SIGKILL');
      expect(await first.proc.exited).toBe('SIGKILL');

      const second = await startGateway();
      const mustArrive = [...delayedIds, ...queuedIds, ...retried.responses.map((r) => r.messageId)];
      await waitFor(
        'every delayed, queued and retried message to be delivered',
        async () => {
          const seen = new Set(destination.requests.map((r) => String(r.headers['upstash-message-id'])));
          return mustArrive.every((id) => seen.has(id)) ? true : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 200 },
      );
      const seen = new Set(destination.requests.map((r) => String(r.headers['upstash-message-id'])));
      expect(cancelledIds.filter((id) => seen.has(id))).toEqual([]);
      const { messages: left } = await clientOf(second.baseUrl).dlq.listMessages({ count: 100 });
      expect(left.map((l) => l.messageId).sort()).toEqual(
        letters
          .slice(25)
          .map((l) => l.messageId)
          .sort(),
      );
      expect(deadIds).toHaveLength(50);
      await waitFor(
        'nothing left pending',
        async () =>
          (await lifecycleRedis.xlen(lifecycleKeys.stream)) === 0 &&
          (await lifecycleRedis.zcard(lifecycleKeys.schedule)) === 0 &&
          (await lifecycleRedis.hlen(lifecycleKeys.streamIndex)) === 0
            ? true
            : undefined,
        { timeoutMs: 10_000 },
      );
    } finally {
      lifecycleRedis.disconnect();
    }
    // Two gateway processes started (30 s each at most) and waits of 30, 30, 60 and 10 s.
  }, 240_000);
});
