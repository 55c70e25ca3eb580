import { queueKeys } from '../../../../gateway/queue/core/keys.js';
import { QuotaExceededError } from '../../../../gateway/queue/core/errors.js';
import { UrlGroupStore } from '../../../../gateway/queue/stores/url-group-store.js';
import { useGatewayRedis } from '../../../helpers/queue/gateway-redis.js';

describe('the URL group store', () => {
  const db = useGatewayRedis();
  let store: UrlGroupStore;

  beforeAll(() => {
    store = new UrlGroupStore(db.redis, queueKeys('{t}:'));
  });
  beforeEach(() => db.inspect.flushdb());

  it('when many adds to one group run at once, then every endpoint is kept (no lost update)', async () => {
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        store.addEndpoints('g', [{ url: `https://e${i}.example/` }], { maxEndpoints: 100, maxGroups: 1 }),
      ),
    );
    expect((await store.get('g'))?.endpoints).toHaveLength(50);
  });

  it('when an add would pass the limit, then it is refused and the group is unchanged', async () => {
    await store.addEndpoints('g', [{ url: 'https://a.example/' }], { maxEndpoints: 2, maxGroups: 1, now: 1 });
    await expect(
      store.addEndpoints('g', [{ url: 'https://b.example/' }, { url: 'https://c.example/' }], {
        maxEndpoints: 2,
        maxGroups: 1,
      }),
    ).rejects.toThrow(QuotaExceededError);
    expect(await store.get('g')).toEqual({
      name: 'g',
      createdAt: 1,
      updatedAt: 1,
      endpoints: [{ url: 'https://a.example/' }],
    });
  });

  it('when groups are created at once past the binding quota, then exactly the quota is created and the rest are refused', async () => {
    const outcomes = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        store.addEndpoints(`g${i}`, [{ url: 'https://a.example/' }], { maxEndpoints: 5, maxGroups: 5 }),
      ),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(5);
    for (const outcome of outcomes.filter((o) => o.status === 'rejected'))
      expect((outcome as PromiseRejectedResult).reason).toEqual(
        expect.objectContaining({
          message: expect.stringMatching(
            /url group limit reached.*\(5, QueueBinding spec.limits.maxUrlGroups\)/,
          ),
        }),
      );
    expect(await db.inspect.hlen('{t}:url-groups')).toBe(5);
    // An existing group still takes endpoints at the group quota.
    await store.addEndpoints((await store.list())[0]!.name, [{ url: 'https://b.example/' }], {
      maxEndpoints: 5,
      maxGroups: 5,
    });
  });

  it('when an endpoint is re-added under a known name, then it replaces the one with that name', async () => {
    await store.addEndpoints('g', [{ name: 'n', url: 'https://old.example/' }], {
      maxEndpoints: 5,
      maxGroups: 1,
    });
    await store.addEndpoints('g', [{ name: 'n', url: 'https://new.example/' }], {
      maxEndpoints: 5,
      maxGroups: 1,
    });
    expect((await store.get('g'))?.endpoints).toEqual([{ name: 'n', url: 'https://new.example/' }]);
  });

  it('when the last endpoint is removed, then the group is gone; removing from a missing group says so', async () => {
    await store.addEndpoints('g', [{ url: 'https://a.example/' }], { maxEndpoints: 5, maxGroups: 1 });
    expect(await store.removeEndpoints('g', [{ url: 'https://a.example/' }])).toBe(0);
    expect(await store.get('g')).toBeUndefined();
    expect(await db.inspect.exists('{t}:url-groups')).toBe(0);
    expect(await store.removeEndpoints('g', [{ url: 'https://a.example/' }])).toBeUndefined();
  });
});
