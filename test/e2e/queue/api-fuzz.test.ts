import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { concretePath, queueApiRouteTable } from '../../helpers/queue/api-route-table.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import { connectTestRedis, snapshotDatabase } from '../../helpers/queue/redis-snapshot.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';
import { randomSigningKey } from '../../helpers/queue/signing-keys.js';
import {
  adversarialBody,
  adversarialHeaders,
  adversarialQuery,
  adversarialSegment,
  anyMethod,
  FuzzCaseCounter,
  isQStashError,
  mangledBase,
  sendFuzzRequest,
  sometimes,
  type FuzzRequest,
} from '../../helpers/fuzz/http-fuzz.js';

/** Every route and method of the gateway's own table, the fallbacks for names holding `/` too. */
const ROUTES = queueApiRouteTable({ withFallbacks: true }).flatMap((route) =>
  Object.keys(route.methods).map((method) => ({ route: route.path, method, path: concretePath(route.path) })),
);

/** Cases per route and method: ~60 routes x this stays well under a minute on a loaded machine. */
const RUNS_PER_ROUTE = 5;
const SEED = Number(process.env.FUZZ_SEED ?? 29);
/**
 * No shrinking in make test: a failure reports the case as generated (replay it with FUZZ_SEED and
 * the printed path), so a run stays bounded by its case count.
 */
const BOUNDED = { seed: SEED, endOnFailure: true } as const;
/**
 * With its Redis down, a binding answers 503 only once the command has waited out its retries:
 * ioredis backs off up to 2 s per reconnect and a command allows 2, so about 4 s a request once the
 * database has been down a while. The case count and the test's time are bounded by that.
 */
const DOWN_RUNS = 10;
const DOWN_ANSWER_MS = 5_000;

/** Every header the QStash API reads, and the few HTTP ones it looks at. */
const HEADERS = [
  'Upstash-Delay',
  'Upstash-Not-Before',
  'Upstash-Retries',
  'Upstash-Retry-Delay',
  'Upstash-Timeout',
  'Upstash-Method',
  'Upstash-Callback',
  'Upstash-Failure-Callback',
  'Upstash-Forward-X-Test',
  'Upstash-Callback-Forward-X',
  'Upstash-Deduplication-Id',
  'Upstash-Content-Based-Deduplication',
  'Upstash-Cron',
  'Upstash-Schedule-Id',
  'Upstash-Queue-Name',
  'Upstash-Flow-Control-Key',
  'Upstash-Flow-Control-Value',
  'Upstash-Label',
  'Upstash-Redact-Fields',
  'Content-Type',
  'Content-Encoding',
];
const QUERY = [
  'cursor',
  'count',
  'limit',
  'order',
  'state',
  'messageId',
  'url',
  'queueName',
  'topicName',
  'scheduleId',
  'fromDate',
  'toDate',
  'label',
  'dlqIds',
  'parallelism',
];

/**
 * The QStash API, fuzzed route by route: adversarial methods, paths (the binding's namespace and
 * name in the queue's path too), Upstash-* headers (wrong, repeated, huge), query parameters and
 * cursors, bodies (malformed and deeply nested JSON, huge strings, invalid UTF-8, binary) and
 * tokens. Whatever comes in: never a 5xx (Redis is up), an
 * answer within the timeout, `{"error": "..."}` on every error, and nothing stored by a 4xx. A
 * second binding whose Redis is down may answer 503, never another 5xx.
 */
describe('the queue API under fuzzed requests', () => {
  let redis: RedisServer;
  let downRedis: RedisServer;
  let gateway: TestQueueGateway;
  let target: QueueTarget;
  let downTarget: QueueTarget;
  let inspect: Redis;
  const counter = new FuzzCaseCounter();

  beforeAll(async () => {
    [redis, downRedis] = await Promise.all([startRedis(), startRedis()]);
    target = testQueueTarget(redis, { namespace: 'fuzz', name: 'up' });
    downTarget = testQueueTarget(downRedis, { namespace: 'fuzz', name: 'down' });
    await downRedis.stop();
    inspect = connectTestRedis(redis);
    gateway = await startTestQueueGateway({
      config: testQueueConfig(),
      targets: [target, downTarget],
      workers: false,
      // Plays the operator at once: the next key becomes current (the route waits for that).
      rotationWriter: async (binding, requestValue) => {
        const current = gateway.registry.get(binding.namespace, binding.name);
        if (current)
          gateway.registry.set({
            ...current,
            signingKeyRotation: requestValue,
            signingKey: current.nextSigningKey,
            nextSigningKey: randomSigningKey(),
          });
      },
    });
  });

  afterAll(async () => {
    process.stdout.write(`${counter.report('queue API fuzz')}\n`);
    await gateway?.stop();
    inspect?.disconnect();
    await redis?.stop();
  });

  /**
   * A request aimed at one route: its method or another, its path or one with a param mangled,
   * now and then the binding's namespace or name in the queue's path too (`bindingMangle`).
   */
  function requestFor(
    route: (typeof ROUTES)[number],
    token: fc.Arbitrary<string | undefined>,
  ): fc.Arbitrary<FuzzRequest & { bindingMangle: [number, string] | null }> {
    const segments = route.path.split('/');
    return fc
      .record({
        method: fc.oneof(
          { arbitrary: fc.constant(route.method), weight: 3 },
          { arbitrary: anyMethod, weight: 1 },
        ),
        mangle: fc.option(fc.tuple(fc.nat({ max: segments.length - 1 }), adversarialSegment), { freq: 2 }),
        bindingMangle: sometimes(fc.tuple(fc.constantFrom(0, 1), adversarialSegment), 8),
        query: adversarialQuery(QUERY),
        headers: adversarialHeaders(HEADERS),
        body: adversarialBody,
        token,
      })
      .filter(({ mangle }) => mangle === null || mangle[0] > 2)
      .map(({ method, mangle, bindingMangle, query, headers, body, token: bearer }) => {
        const path = mangle
          ? segments.map((s, i) => (i === mangle[0] ? mangle[1] : s)).join('/')
          : route.path;
        return {
          method,
          bindingMangle,
          path: `${path}${query}`,
          headers: { ...headers, ...(bearer !== undefined && { authorization: bearer }) },
          ...(body !== undefined && method !== 'GET' && method !== 'HEAD' && { body }),
        };
      });
  }

  const tokens = (valid: string): fc.Arbitrary<string | undefined> =>
    fc.oneof(
      { arbitrary: fc.constant(`Bearer ${valid}`), weight: 6 },
      fc.constantFrom(
        undefined,
        'Bearer',
        'Bearer ',
        `Bearer ${valid}x`,
        `bearer ${valid}`,
        `Basic ${valid}`,
        `Bearer ${valid}, Bearer ${valid}`,
      ),
    );

  it.each(ROUTES.map((r) => [`${r.method} ${r.route}`, r] as const))(
    'when %s is asked with fuzzed input, then no 5xx, every error is {"error"}, and a 4xx stores nothing',
    async (name, route) => {
      const base = gateway.queueUrl(target);
      await fc.assert(
        fc.asyncProperty(requestFor(route, tokens(target.token)), async ({ bindingMangle, ...request }) => {
          counter.count(name);
          const before = await snapshotDatabase(inspect);
          const response = await sendFuzzRequest(mangledBase(base, bindingMangle), request);
          counter.answered(response.status);
          expect(response.status).toBeLessThan(500);
          if (response.status >= 400 && request.method !== 'HEAD')
            expect(isQStashError(response.body)).toBe(true);
          if (response.status >= 400) expect(await snapshotDatabase(inspect)).toEqual(before);
        }),
        { numRuns: RUNS_PER_ROUTE, ...BOUNDED },
      );
    },
  );

  it(
    'when any route of a binding whose Redis is down is asked with fuzzed input, then it is a 4xx or a 503, with {"error"}',
    async () => {
      const base = gateway.queueUrl(downTarget);
      await fc.assert(
        fc.asyncProperty(
          fc
            .constantFrom(...ROUTES)
            .chain((route) => requestFor(route, tokens(downTarget.token)).map((r) => [route, r] as const)),
          async ([route, { bindingMangle, ...request }]) => {
            counter.count(`(database down) ${route.method} ${route.route}`);
            const response = await sendFuzzRequest(mangledBase(base, bindingMangle), request);
            counter.answered(response.status);
            expect([response.status, response.status < 500 || response.status === 503]).toEqual([
              response.status,
              true,
            ]);
            if (response.status >= 400 && request.method !== 'HEAD')
              expect(isQStashError(response.body)).toBe(true);
          },
        ),
        { numRuns: DOWN_RUNS, ...BOUNDED },
      );
    },
    DOWN_RUNS * DOWN_ANSWER_MS + 30_000,
  );
});
