import { waitFor } from '../../../local/wait.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { useQueueReplicas } from '../../helpers/queue/queue-replicas.js';

const KEY_PREFIX = '{queue-death-test}:';
const keys = queueKeys(KEY_PREFIX);

/**
 * A queue's slot is held by its message, not by the replica delivering it: when that replica is
 * SIGKILLed mid-delivery, the survivor takes the entry over with the consumer lease, delivers it,
 * and only then starts the next message, so order and parallelism hold across the death and no
 * slot is leaked.
 */
describe('a queue whose delivering replica dies', () => {
  const replicas = useQueueReplicas({
    keyPrefix: KEY_PREFIX,
    env: { SETTEE_QUEUE_BLOCK_MS: '200', SETTEE_QUEUE_POLL_INTERVAL_MS: '100' },
  });
  const { startReplica, sdkClient } = replicas;

  it('when the replica delivering the head of a parallelism-1 queue is SIGKILLed, then the survivor delivers it again before the next, and the slot count ends at zero', async () => {
    replicas.destination.answer = () => 'hang';
    const dying = await startReplica('queue-replica-dying');
    const client = sdkClient(dying);
    const queue = client.queue({ queueName: 'serial' });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (await queue.enqueueJSON({ url: `${replicas.destination.baseUrl}/serial/${i}`, body: { i } }))
          .messageId,
      );
    await waitFor(
      'the dying replica to hold the first delivery',
      async () => replicas.destination.requests.length === 1 || undefined,
      {
        timeoutMs: 10_000,
      },
    );
    expect(await replicas.inspect.smembers(keys.queueActive('serial'))).toEqual([ids[0]]);

    await startReplica('queue-replica-survivor');
    replicas.destination.answer = () => ({ status: 200 });
    process.kill(dying.proc.pid, 'SIGKILL');
    expect(await dying.proc.exited).toBe('SIGKILL');

    await waitFor(
      'all three messages delivered after the death',
      async () => (replicas.destination.requests.length >= 4 ? true : undefined),
      { timeoutMs: 25_000, intervalMs: 50 },
    );
    // The head was sent twice (the dead replica's attempt, then the survivor's), and only then the rest, in order.
    expect(replicas.destination.requests.map((r) => r.headers['upstash-message-id'])).toEqual([
      ids[0],
      ids[0],
      ids[1],
      ids[2],
    ]);
    await waitFor(
      'the slot count back to zero',
      async () => ((await replicas.inspect.scard(keys.queueActive('serial'))) === 0 ? true : undefined),
      { timeoutMs: 5_000 },
    );
    expect(await replicas.inspect.llen(keys.queueWaiting('serial'))).toBe(0);
    // Two gateway processes started (30 s each at most) besides the waits.
  }, 120_000);
});
