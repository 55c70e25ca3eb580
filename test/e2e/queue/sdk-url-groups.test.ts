import type { Client } from '@upstash/qstash';
import { Receiver } from '@upstash/qstash';
import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { MessageStore } from '../../../gateway/queue/stores/message-store.js';
import { installNetworkTripwire } from '../../helpers/network-tripwire.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import { connectTestRedis, snapshotDatabase } from '../../helpers/queue/redis-snapshot.js';
import { randomSigningKey } from '../../helpers/queue/signing-keys.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';
import { startTestReceiver, type TestReceiver } from '../../helpers/queue/test-receiver.js';
import { quietly } from '../../helpers/queue/quietly.js';
import { queueSdkClient } from '../../helpers/queue/queue-sdk-client.js';
import { expectErrorAnswers, type ErrorAnswerCase } from '../../helpers/queue/error-answers.js';

/**
 * URL groups (`client.urlGroups.*`, publishing with `urlGroup`) through the unchanged SDK: the
 * group API, the fan-out to one signed message per endpoint, and the SSRF policy applied to
 * every endpoint when it is added and again when a delivery connects.
 */
describe('URL groups with the @upstash/qstash SDK', () => {
  const config = testQueueConfig();
  let redis: RedisServer;
  let otherRedis: RedisServer;
  let gateway: TestQueueGateway;
  let receiver: TestReceiver;
  let target: QueueTarget;
  let otherTarget: QueueTarget;
  let inspect: Redis;
  /** Every host name the gateway looked up (its only resolver). */
  const resolved: string[] = [];

  const client = (token = target.token): Client => queueSdkClient(gateway, target, token);

  beforeAll(async () => {
    [redis, otherRedis] = await Promise.all([startRedis(), startRedis()]);
    const signingKey = randomSigningKey();
    // Two groups (spec.limits.maxUrlGroups) rather than the free plan's one: the shapes test lists two.
    target = testQueueTarget(redis, {
      namespace: 'tenant-a',
      name: 'cache',
      signingKey,
      limits: { maxUrlGroups: 2 },
    });
    otherTarget = testQueueTarget(otherRedis, { namespace: 'tenant-b', name: 'cache' });
    receiver = await startTestReceiver({ currentSigningKey: signingKey });
    inspect = connectTestRedis(redis);
    gateway = await startTestQueueGateway({
      config,
      targets: [target, otherTarget],
      // An attacker's DNS: this name answers a private address, refused when a delivery connects.
      resolve: async (hostname) => {
        resolved.push(hostname);
        return hostname === 'private-alias.test' ? [{ address: '10.1.2.3', family: 4 }] : [];
      },
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await receiver?.close();
    inspect?.disconnect();
    await Promise.all([redis?.stop(), otherRedis?.stop()]);
  });

  beforeEach(async () => {
    receiver.deliveries.length = 0;
    for (const group of await client().urlGroups.list()) await client().urlGroups.delete(group.name);
  });

  const deliveryOf = (messageId: string) =>
    waitFor(
      `delivery of ${messageId}`,
      async () => receiver.deliveries.find((d) => d.headers['upstash-message-id'] === messageId),
      { timeoutMs: 10_000, intervalMs: 20 },
    );

  it("when endpoints are added, listed, removed and the group deleted, then the SDK sees QStash's shapes at each step", async () => {
    const before = Date.now();
    await client().urlGroups.addEndpoints({
      name: 'orders',
      endpoints: [
        { name: 'billing', url: `${receiver.baseUrl}/billing` },
        { url: `${receiver.baseUrl}/mail` },
      ],
    });
    const group = await client().urlGroups.get('orders');
    expect(group).toEqual({
      name: 'orders',
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
      endpoints: [
        { name: 'billing', url: `${receiver.baseUrl}/billing` },
        { url: `${receiver.baseUrl}/mail` },
      ],
    });
    expect(group.createdAt).toBeGreaterThanOrEqual(before);

    // Adding the same URL again renames it rather than adding a second endpoint.
    await client().urlGroups.addEndpoints({
      name: 'orders',
      endpoints: [{ name: 'mailer', url: `${receiver.baseUrl}/mail` }],
    });
    await client().urlGroups.addEndpoints({
      name: 'audit',
      endpoints: [{ url: `${receiver.baseUrl}/audit` }],
    });
    const listed = await client().urlGroups.list();
    expect(listed.map((g) => g.name)).toEqual(['audit', 'orders']);
    expect(listed[1]?.endpoints).toEqual([
      { name: 'billing', url: `${receiver.baseUrl}/billing` },
      { name: 'mailer', url: `${receiver.baseUrl}/mail` },
    ]);

    await client().urlGroups.removeEndpoints({ name: 'orders', endpoints: [{ name: 'billing' }] });
    expect((await client().urlGroups.get('orders')).endpoints).toEqual([
      { name: 'mailer', url: `${receiver.baseUrl}/mail` },
    ]);
    // Removing the last endpoint deletes the group, as QStash does.
    await client().urlGroups.removeEndpoints({
      name: 'orders',
      endpoints: [{ url: `${receiver.baseUrl}/mail` }],
    });
    await expect(quietly(() => client().urlGroups.get('orders'))).rejects.toThrow(/not found/);

    await client().urlGroups.delete('audit');
    expect(await client().urlGroups.list()).toEqual([]);
    // Deleting a group that does not exist succeeds, as QStash's does.
    await client().urlGroups.delete('audit');
    await expect(
      quietly(() =>
        client().urlGroups.removeEndpoints({ name: 'audit', endpoints: [{ url: 'https://a.example' }] }),
      ),
    ).rejects.toThrow(/not found/);
  });

  it('when a message is published to a group, then each endpoint gets its own signed message carrying Upstash-Topic-Name, and the answer lists them', async () => {
    const endpoints = [0, 1, 2].map((i) => ({ url: `${receiver.baseUrl}/fan/${i}?q=${i}` }));
    await client().urlGroups.addEndpoints({ name: 'fan.out', endpoints });
    const answer = await client().publishJSON({
      urlGroup: 'fan.out',
      body: { order: 7 },
      headers: { 'X-Trace': 't1' },
    });
    expect(answer).toEqual(endpoints.map((e) => ({ messageId: expect.stringMatching(/^msg_/), url: e.url })));
    const ids = (answer as { messageId: string }[]).map((a) => a.messageId);
    expect(new Set(ids).size).toBe(3);
    for (const [i, { messageId }] of (answer as { messageId: string; url: string }[]).entries()) {
      const delivery = await deliveryOf(messageId);
      expect(delivery.url).toBe(endpoints[i]!.url);
      expect(delivery.headers['upstash-topic-name']).toBe('fan.out');
      expect(delivery.headers['x-trace']).toBe('t1');
      expect(JSON.parse(delivery.body.toString('utf8'))).toEqual({ order: 7 });
      await expect(
        new Receiver({ currentSigningKey: target.signingKey, nextSigningKey: randomSigningKey() }).verify({
          signature: String(delivery.headers['upstash-signature']),
          body: delivery.body.toString('utf8'),
          url: endpoints[i]!.url,
        }),
      ).resolves.toBe(true);
    }
  });

  it('when a group’s endpoints have names, then each message and its events carry its endpointName, and endpointName filters them', async () => {
    await client().urlGroups.addEndpoints({
      name: 'named',
      endpoints: [
        { name: 'billing', url: `${receiver.baseUrl}/named/billing` },
        { url: `${receiver.baseUrl}/named/anonymous` },
      ],
    });
    const answer = (await client().publishJSON({ urlGroup: 'named', body: {}, delay: '1h' })) as unknown as {
      messageId: string;
    }[];
    const [billing, anonymous] = await Promise.all(answer.map((a) => client().messages.get(a.messageId)));
    expect(billing).toMatchObject({ urlGroup: 'named', topicName: 'named', endpointName: 'billing' });
    expect(anonymous!.endpointName).toBeUndefined();
    const { logs } = await client().logs({ filter: { endpointName: 'billing' } } as never);
    expect(logs.map((l) => [l.messageId, l.state, l.endpointName])).toEqual([
      [billing!.messageId, 'CREATED', 'billing'],
    ]);
    await client().messages.cancel({ all: true });
  });

  it('when a batch mixes a URL and a group, then the group item answers an array per endpoint and everything is delivered', async () => {
    await client().urlGroups.addEndpoints({
      name: 'pair',
      endpoints: [{ url: `${receiver.baseUrl}/pair/a` }, { url: `${receiver.baseUrl}/pair/b` }],
    });
    const answer = (await client().batchJSON([
      { url: `${receiver.baseUrl}/single`, body: { n: 1 } },
      { urlGroup: 'pair', body: { n: 2 } },
    ])) as unknown[];
    expect(answer).toEqual([
      { messageId: expect.stringMatching(/^msg_/) },
      [
        { messageId: expect.stringMatching(/^msg_/), url: `${receiver.baseUrl}/pair/a` },
        { messageId: expect.stringMatching(/^msg_/), url: `${receiver.baseUrl}/pair/b` },
      ],
    ]);
    const single = await deliveryOf((answer[0] as { messageId: string }).messageId);
    expect(single.headers['upstash-topic-name']).toBeUndefined();
    for (const item of answer[1] as { messageId: string }[]) {
      expect((await deliveryOf(item.messageId)).headers['upstash-topic-name']).toBe('pair');
    }
  });

  it('when a group name is a URL or has odd characters, an endpoint is refused by the SSRF policy, or the group is missing, then the answer is a 400 or 404 naming it and nothing is stored', async () => {
    const snapshot = await snapshotDatabase(inspect);
    const raw = (path: string, method: string, body?: unknown) =>
      fetch(`${gateway.queueUrl(target)}${path}`, {
        method,
        headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const add = (name: string, endpoints: unknown) =>
      raw(`/v2/topics/${name}/endpoints`, 'POST', { endpoints });
    const cases: ErrorAnswerCase[] = [
      [
        add(encodeURIComponent('https://evil.example/x'), [{ url: `${receiver.baseUrl}/a` }]),
        400,
        /url group name .* may contain only/,
      ],
      [add('bad%20name', [{ url: `${receiver.baseUrl}/a` }]), 400, /url group name "bad name"/],
      [add('x'.repeat(129), [{ url: `${receiver.baseUrl}/a` }]), 400, /longer than 128/],
      [
        add('ok', [{ url: 'http://169.254.169.254/latest/meta-data' }]),
        400,
        /endpoints\.0\.url: .*linkLocal/,
      ],
      [
        add('ok', [{ url: `${receiver.baseUrl}/a` }, { url: 'ftp://files.example/x' }]),
        400,
        /endpoints\.1\.url: .*http and https/,
      ],
      [add('ok', [{ name: 'no-url' }]), 400, /endpoints\.0\.url is missing/],
      [add('ok', []), 400, /endpoints must NOT have fewer than 1 items/],
      [add('ok', [{ url: `${receiver.baseUrl}/a`, extra: 1 }]), 400, /must NOT have additional properties/],
      [raw('/v2/topics/ok/endpoints', 'POST', 'not an object'), 400, /the body must be object/],
      [raw('/v2/topics/ok/endpoints', 'DELETE', { endpoints: [{}] }), 400, /needs a url or a name/],
      [
        raw('/v2/topics/ok/endpoints', 'PUT', { endpoints: [] }),
        405,
        /method not allowed: this route takes POST, DELETE/,
      ],
      [raw('/v2/publish/missing-group', 'POST', {}), 404, /url group missing-group not found/],
    ];
    await expectErrorAnswers(cases);
    // A batch item for a missing group is refused in its place (QStash answers a batch per item).
    const batch = await raw('/v2/batch', 'POST', [{ destination: 'missing-group' }]);
    expect(batch.status).toBe(201);
    expect(await batch.json()).toEqual([{ error: 'batch item 0: url group missing-group not found' }]);
    expect(await snapshotDatabase(inspect)).toEqual(snapshot);
  });

  it('when a URL group name is a URL, sent by the SDK unencoded, then every urlGroups call is a 400 naming the field, nothing is stored, and the name is never looked up', async () => {
    const snapshot = await snapshotDatabase(inspect);
    const name = 'https://x.example/y';
    const calls: [string, () => Promise<unknown>][] = [
      [
        'addEndpoints',
        () => client().urlGroups.addEndpoints({ name, endpoints: [{ url: `${receiver.baseUrl}/a` }] }),
      ],
      [
        'removeEndpoints',
        () => client().urlGroups.removeEndpoints({ name, endpoints: [{ url: `${receiver.baseUrl}/a` }] }),
      ],
      ['get', () => client().urlGroups.get(name)],
      ['delete', () => client().urlGroups.delete(name)],
    ];
    for (const [call, run] of calls) {
      const refused = await quietly(run).then(
        () => 'answered',
        (err: Error) => err.message,
      );
      expect({ call, refused }).toEqual({
        call,
        refused: expect.stringMatching(/url group name \\"https:\/\/x\.example\/y\\" may contain only/),
      });
    }
    expect(resolved.filter((host) => host.includes('x.example'))).toEqual([]);
    expect(await snapshotDatabase(inspect)).toEqual(snapshot);
  });

  it("when a binding has its most URL groups (spec.limits.maxUrlGroups), or a group its most endpoints (the free plan's 100 by default), then the add is a 412 naming the quota and nothing is stored", async () => {
    const endpoint = (i: number) => ({ url: `${receiver.baseUrl}/e/${i}` });
    await client().urlGroups.addEndpoints({
      name: 'only',
      endpoints: Array.from({ length: 99 }, (_, i) => endpoint(i)),
    });
    await client().urlGroups.addEndpoints({ name: 'two', endpoints: [endpoint(0)] });
    const snapshot = await snapshotDatabase(inspect);
    const refused = async (call: () => Promise<unknown>) =>
      quietly(call).then(
        () => 'stored',
        (err: { status?: number; message: string }) => ({ status: err.status, error: err.message }),
      );
    expect(
      await refused(() => client().urlGroups.addEndpoints({ name: 'third', endpoints: [endpoint(0)] })),
    ).toEqual({
      status: 412,
      error: expect.stringMatching(
        /url group limit reached: the binding has its most url groups \(2, QueueBinding spec.limits.maxUrlGroups\)/,
      ),
    });
    expect(
      await refused(() =>
        client().urlGroups.addEndpoints({ name: 'only', endpoints: [endpoint(99), endpoint(100)] }),
      ),
    ).toEqual({
      status: 412,
      error: expect.stringMatching(
        /endpoint limit reached: a url group holds at most 100 endpoints \(QueueBinding spec.limits.maxUrlGroupEndpoints\)/,
      ),
    });
    expect(await snapshotDatabase(inspect)).toEqual(snapshot);
    // Up to the quota, and re-adding known URLs, is fine.
    await client().urlGroups.addEndpoints({ name: 'only', endpoints: [endpoint(99), endpoint(0)] });
    expect((await client().urlGroups.get('only')).endpoints).toHaveLength(100);
  });

  it("when another tenant's token is used, then the group API answers 401 and shows nothing", async () => {
    await client().urlGroups.addEndpoints({ name: 'private', endpoints: [{ url: `${receiver.baseUrl}/p` }] });
    await expect(quietly(() => client(otherTarget.token).urlGroups.list())).rejects.toThrow(/invalid token/);
    await expect(quietly(() => client(otherTarget.token).urlGroups.get('private'))).rejects.toThrow(
      /invalid token/,
    );
    const otherTenant = queueSdkClient(gateway, otherTarget);
    expect(await otherTenant.urlGroups.list()).toEqual([]);
  });

  it('when an endpoint name resolves to a private address, then the delivery to it is refused at connect time and dead-lettered, and the other endpoints still get theirs', async () => {
    await client().urlGroups.addEndpoints({
      name: 'mixed',
      endpoints: [{ url: 'http://private-alias.test/hook' }, { url: `${receiver.baseUrl}/ok` }],
    });
    const tripwire = installNetworkTripwire();
    try {
      const answer = (await client().publishJSON({ urlGroup: 'mixed', body: {} })) as unknown as {
        messageId: string;
        url: string;
      }[];
      await deliveryOf(answer[1]!.messageId);
      const store = new MessageStore(inspect, queueKeys(config.keyPrefix));
      const letter = await waitFor(
        'the refused delivery to be dead-lettered',
        async () => (await store.deadLetters(100)).find((l) => l.messageId === answer[0]!.messageId),
        { timeoutMs: 10_000 },
      );
      expect(letter).toMatchObject({
        reason: 'destination-refused',
        lastError: expect.stringMatching(/private/),
      });
      // The DLQ knows the group the letter came from, and filters by it as the SDK asks.
      const { messages } = await client().dlq.listMessages({ filter: { urlGroup: 'mixed' } });
      expect(messages.map((m) => [m.messageId, m.urlGroup])).toEqual([[answer[0]!.messageId, 'mixed']]);
      expect((await client().dlq.listMessages({ filter: { urlGroup: 'other' } })).messages).toEqual([]);
      expect(tripwire.violations).toEqual([]);
    } finally {
      tripwire.uninstall();
    }
  });
});
