import { waitFor } from '../../../local/wait.js';
import { QUEUE_CONFIG_DEFAULTS } from '../../../gateway/queue/core/config.js';
import { DELIVERY_GROUP, queueKeys } from '../../../gateway/queue/core/keys.js';
import { useQueueReplicas } from '../../helpers/queue/queue-replicas.js';

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
  const replicas = useQueueReplicas({
    keyPrefix: KEY_PREFIX,
    env: { SETTEE_QUEUE_BLOCK_MS: '200', SETTEE_QUEUE_WORKER_CONCURRENCY: '16' },
  });
  const { startReplica, sdkClient } = replicas;

  async function pendingOn(consumer: string): Promise<number> {
    const pending = (await replicas.inspect.xpending(
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
    replicas.destination.answer = () => 'hang';
    const dying = await startReplica('replica-dying');
    const client = sdkClient(dying);
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const { messageId } = await client.publishJSON({
        url: `${replicas.destination.baseUrl}/held/${i}`,
        body: { i },
      });
      ids.push(messageId);
    }
    await waitFor(
      'the dying replica to hold all 10 deliveries',
      async () => (replicas.destination.requests.length === 10 ? true : undefined),
      { timeoutMs: 10_000 },
    );
    expect(await pendingOn('replica-dying')).toBe(10);
    await startReplica('replica-survivor');
    replicas.destination.answer = () => ({ status: 200 });

    process.kill(dying.proc.pid, 'SIGKILL');
    expect(await dying.proc.exited).toBe('SIGKILL');
    const killedAt = Date.now();

    const redelivered = await waitFor(
      'every held message to be delivered again',
      async () => {
        const after = ids.map((id) => replicas.destination.attemptsOf(id).find((r) => r.at >= killedAt));
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
        (await replicas.inspect.zscore(keys.consumerHeartbeats, 'replica-dying')) === null &&
        (await pendingOn('replica-dying')) === 0
          ? true
          : undefined,
      { timeoutMs: 10_000 },
    );
    await waitFor(
      'the stream to be empty',
      async () => ((await replicas.inspect.xlen(keys.stream)) === 0 ? true : undefined),
      { timeoutMs: 5_000 },
    );
    // Two gateway processes started (30 s each at most) besides the waits.
  }, 120_000);

  it('when a live replica’s receiver takes longer than two leases to answer, then no other replica takes its deliveries', async () => {
    const slowMs = 2 * QUEUE_CONFIG_DEFAULTS.consumerLeaseMs + 1_000;
    expect(slowMs).toBeLessThan(QUEUE_CONFIG_DEFAULTS.deliveryTimeoutMs);
    const other = await startReplica('replica-other');
    replicas.destination.answer = (request) =>
      request.path.startsWith('/slow/') ? { status: 200, delayMs: slowMs } : { status: 200 };
    const client = sdkClient(other);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const { messageId } = await client.publishJSON({
        url: `${replicas.destination.baseUrl}/slow/${i}`,
        body: { i },
      });
      ids.push(messageId);
    }
    await waitFor(
      'every slow delivery to be answered',
      async () => ((await replicas.inspect.xlen(keys.stream)) === 0 ? true : undefined),
      { timeoutMs: slowMs + 15_000, intervalMs: 200 },
    );
    for (const id of ids) expect(replicas.destination.attemptsOf(id)).toHaveLength(1);
    expect(await replicas.inspect.llen(keys.deadLetters)).toBe(0);
  }, 60_000);
});
