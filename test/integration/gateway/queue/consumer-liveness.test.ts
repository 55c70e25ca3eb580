import type { Redis } from 'ioredis';
import { ConsumerLiveness } from '../../../../gateway/queue/stores/consumer-liveness.js';
import { DELIVERY_GROUP, type QueueKeys } from '../../../../gateway/queue/core/keys.js';
import { createMessage } from '../../../../gateway/queue/core/message.js';
import { decodeMessage } from '../../../../gateway/queue/core/message-codec.js';
import type { MessageStore } from '../../../../gateway/queue/stores/message-store.js';
import { useStoreFixture } from '../../../helpers/queue/store-fixture.js';

const LEASE_MS = 200;
const LIVE_LEASE_MS = 30_000;

describe('consumer leases in a real Redis', () => {
  const f = useStoreFixture('lease');
  let redis: Redis;
  let blocking: Redis;
  let keys: QueueKeys;
  let store: MessageStore;
  let liveness: ConsumerLiveness;
  beforeEach(() => {
    ({ redis, blocking, keys, store } = f);
    liveness = new ConsumerLiveness(redis, keys);
  });

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  async function holdMessages(consumer: string, count: number) {
    const messages = Array.from({ length: count }, (_, n) =>
      createMessage({
        destination: `https://a.example/${n}`,
        method: 'POST',
        headers: {},
        body: Buffer.from([0xff, 0x00, n]),
        retries: 0,
      }),
    );
    await store.enqueue(messages);
    await liveness.heartbeat(consumer);
    await store.readNew(blocking, consumer, count, 100);
    return messages;
  }

  it('when a consumer’s lease has run out, then another takes over its entries whole, a batch at a time, and then forgets it', async () => {
    const messages = await holdMessages('dead', 3);
    await liveness.heartbeat('survivor');
    // A lease no stall of a loaded machine outlasts: 'dead' last beat within it (a 200 ms one ran out
    // between holdMessages and this check once, at load 30).
    expect(await liveness.claimFromDead('survivor', LIVE_LEASE_MS, 10)).toBeUndefined();
    await sleep(LEASE_MS + 50);
    await liveness.heartbeat('survivor');

    const first = await liveness.claimFromDead('survivor', LEASE_MS, 2);
    const second = await liveness.claimFromDead('survivor', LEASE_MS, 2);
    expect(first?.deadConsumer).toBe('dead');
    expect([...first!.entries, ...second!.entries].map((e) => decodeMessage(e.stored!))).toEqual(messages);
    expect(await liveness.claimFromDead('survivor', LEASE_MS, 2)).toBeUndefined();
    expect(await redis.zscore(keys.consumerHeartbeats, 'dead')).toBeNull();
    const consumers = (await redis.xinfo('CONSUMERS', keys.stream, DELIVERY_GROUP)) as unknown[][];
    expect(consumers.map((c) => c[1])).toEqual(['survivor']);
  });

  it('when a consumer renews its lease in time, then nothing of it is taken, however long its entries have been pending', async () => {
    await holdMessages('slow', 2);
    for (let i = 0; i < 4; i++) {
      await sleep(LEASE_MS / 2);
      await liveness.heartbeat('slow');
      expect(await liveness.claimFromDead('other', LEASE_MS, 10)).toBeUndefined();
    }
    const pending = (await redis.xpending(keys.stream, DELIVERY_GROUP, '-', '+', 10, 'slow')) as unknown[];
    expect(pending).toHaveLength(2);
  });

  it('when a consumer gives up its lease, then its entries are taken over at the next check', async () => {
    await holdMessages('leaving', 1);
    await liveness.release('leaving');
    const claimed = await liveness.claimFromDead('other', 60_000, 10);
    expect(claimed?.entries).toHaveLength(1);
  });

  it('when the claimer itself looks dead, then it does not claim from itself', async () => {
    await holdMessages('paused', 1);
    await sleep(LEASE_MS + 50);
    expect(await liveness.claimFromDead('paused', LEASE_MS, 10)).toBeUndefined();
  });
});
