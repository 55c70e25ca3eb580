import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import { connectTestRedis, snapshotDatabase } from '../../helpers/queue/redis-snapshot.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';

/**
 * Every kind of bad publish, over HTTP: a 400 (or 401) with a QStash-style `{"error": ...}`, and
 * the binding's database exactly as it was. The SSRF allowlist is empty here (the default), so
 * the private and loopback destinations are refused; none of them is ever connected to, since
 * publishing only stores, and these are refused before that.
 */
describe('bad publishes', () => {
  let redis: RedisServer;
  let inspect: Redis;
  let gateway: TestQueueGateway;
  let target: QueueTarget;
  let queueUrl: string;

  beforeAll(async () => {
    redis = await startRedis();
    inspect = connectTestRedis(redis);
    target = testQueueTarget(redis);
    const config = testQueueConfig({ ssrfAllowlist: [], maxBodyBytes: 1_024, maxBatchSize: 5 });
    gateway = await startTestQueueGateway({ config, targets: [target], workers: false });
    queueUrl = gateway.queueUrl(target);
    // One good publish first, so "unchanged" is checked against a database that has queue keys.
    const ok = await post('/v2/publish/https://receiver.example/ok', { body: '{}' });
    expect(ok.status).toBe(201);
  });
  afterAll(async () => {
    inspect?.disconnect();
    await gateway?.stop();
    await redis?.stop();
  });

  function post(
    path: string,
    init: { body?: string | Buffer; headers?: Record<string, string>; token?: string | null } = {},
  ) {
    const headers: Record<string, string> = { ...(init.headers ?? {}) };
    if (init.token !== null) headers.authorization = `Bearer ${init.token ?? target.token}`;
    return fetch(`${queueUrl}${path}`, { method: 'POST', headers, body: init.body });
  }

  async function expectRefused(response: Response, status: number, message: RegExp): Promise<void> {
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toMatch(/application\/json/);
    const body = (await response.json()) as { error: string };
    expect(Object.keys(body)).toEqual(['error']);
    expect(body.error).toMatch(message);
  }

  const cases: [string, () => Promise<Response>, number, RegExp][] = [
    [
      'invalid JSON in a batch',
      () => post('/v2/batch', { body: '[{"url": ', headers: { 'content-type': 'application/json' } }),
      400,
      /not valid JSON/,
    ],
    [
      'a batch that is not an array',
      () => post('/v2/batch', { body: '{"url": "https://a.example"}' }),
      400,
      /JSON array/,
    ],
    [
      'more batch items than the limit',
      () =>
        post('/v2/batch', {
          body: JSON.stringify(Array.from({ length: 6 }, () => ({ url: 'https://a.example' }))),
        }),
      400,
      /more than the allowed 5/,
    ],
    [
      'a batch item without a destination (the batch is not well-formed)',
      () => post('/v2/batch', { body: JSON.stringify([{ url: 'https://a.example' }, { body: 'x' }]) }),
      400,
      /batch item 1 must have a destination or a url/,
    ],
    ['a missing destination', () => post('/v2/publish/', { body: '{}' }), 400, /destination is missing/],
    [
      'no destination segment at all',
      () => post('/v2/publish', { body: '{}' }),
      400,
      /destination is missing/,
    ],
    [
      'an unparsable destination',
      () => post('/v2/publish/not%20a%20url', { body: '{}' }),
      400,
      /is not a URL/,
    ],
    [
      'a non-http scheme',
      () => post('/v2/publish/ftp://a.example/file', { body: '{}' }),
      400,
      /only http and https/,
    ],
    [
      'a body over the limit',
      () => post('/v2/publish/https://a.example/', { body: Buffer.alloc(1_025, 120) }),
      413,
      /too large/,
    ],
    [
      'an unparsable Upstash-Retries',
      () => post('/v2/publish/https://a.example/', { body: '{}', headers: { 'Upstash-Retries': 'abc' } }),
      400,
      /Upstash-Retries/,
    ],
    [
      'an unparsable Upstash-Retry-Delay',
      () =>
        post('/v2/publish/https://a.example/', { body: '{}', headers: { 'Upstash-Retry-Delay': 'pow(2,' } }),
      400,
      /Upstash-Retry-Delay/,
    ],
    [
      'an unknown Upstash-Method',
      () => post('/v2/publish/https://a.example/', { body: '{}', headers: { 'Upstash-Method': 'FETCH' } }),
      400,
      /Upstash-Method/,
    ],
    [
      "a delay beyond the binding's limit",
      () => post('/v2/publish/https://a.example/', { body: '{}', headers: { 'Upstash-Delay': '8d' } }),
      400,
      /Upstash-Delay 8d is longer than the queue's maximum delay of 7d \(QueueBinding spec.limits.maxDelay\)/,
    ],
    [
      'an unparsable Upstash-Delay',
      () =>
        post('/v2/publish/https://a.example/', { body: '{}', headers: { 'Upstash-Delay': '10 minutes' } }),
      400,
      /Upstash-Delay "10 minutes" is not a duration/,
    ],
    [
      'an unparsable Upstash-Not-Before',
      () =>
        post('/v2/publish/https://a.example/', {
          body: '{}',
          headers: { 'Upstash-Not-Before': '2026-01-01' },
        }),
      400,
      /Upstash-Not-Before "2026-01-01" is not a unix time in seconds/,
    ],
    [
      'no token',
      () => post('/v2/publish/https://a.example/', { body: '{}', token: null }),
      401,
      /bearer token/,
    ],
    [
      'a wrong token',
      () => post('/v2/publish/https://a.example/', { body: '{}', token: 'wrong' }),
      401,
      /invalid token/,
    ],
  ];

  it.each(cases)(
    'when the request has %s, then it is refused and the database is unchanged',
    async (_name, send, status, message) => {
      const before = await snapshotDatabase(inspect);
      await expectRefused(await send(), status, message);
      expect(await snapshotDatabase(inspect)).toEqual(before);
    },
  );

  it.each([
    '127.0.0.1',
    '10.0.0.1',
    '172.16.0.1',
    '192.168.1.1',
    '100.64.0.1',
    '169.254.169.254',
    '[::1]',
    '[::ffff:127.0.0.1]',
    '[::127.0.0.1]',
    '[::a00:1]',
    '2130706433',
    '0x7f000001',
  ])(
    'when the destination host is %s, then the publish is refused by the SSRF guard and nothing is stored',
    async (host) => {
      const before = await snapshotDatabase(inspect);
      await expectRefused(await post(`/v2/publish/http://${host}:8080/hook`, { body: '{}' }), 400, /refused/);
      expect(await snapshotDatabase(inspect)).toEqual(before);
    },
  );

  it('when the binding does not exist, then it is 404 and nothing is stored', async () => {
    const before = await snapshotDatabase(inspect);
    const response = await fetch(`${gateway.baseUrl}/queue/ns/nope/v2/publish/https://a.example/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${target.token}` },
      body: '{}',
    });
    await expectRefused(response, 404, /not found/);
    expect(await snapshotDatabase(inspect)).toEqual(before);
  });
});
