import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { startCouchEngine, type CouchEngine } from '../../../local/couch-engine/index.js';
import { waitFor } from '../../../local/wait.js';
import type { Gateway } from '../../../gateway/gateway.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import {
  createCouchInstance,
  instanceUrl,
  setInstancePod,
  startTestGateway,
} from '../../helpers/gateway/gateway-harness.js';
import { basicAuth, request } from '../../helpers/gateway/http-request.js';
import {
  adversarialBody,
  adversarialHeaders,
  adversarialQuery,
  adversarialSegment,
  anyMethod,
  FuzzCaseCounter,
  hostHeader,
  isCouchError,
  mangledBase,
  sendFuzzRequest,
  sometimes,
  type FuzzRequest,
  type FuzzResponse,
} from '../../helpers/fuzz/http-fuzz.js';

/**
 * The routes of CouchDB's API a client sends through an instance's path, with the documents the
 * fixtures hold ({db} `fuzz`, {doc} `doc1`); the DELETE of a database aims at one made for it.
 */
const ROUTES = [
  ['GET', '/'],
  ['GET', '/_up'],
  ['GET', '/_all_dbs'],
  ['GET', '/_uuids'],
  ['POST', '/_session'],
  ['GET', '/_node/_local/_config'],
  ['PUT', '/_node/_local/_config/fuzz/key'],
  ['POST', '/_replicate'],
  ['GET', '/_scheduler/jobs'],
  ['PUT', '/fuzz'],
  ['GET', '/fuzz'],
  ['POST', '/fuzz'],
  ['DELETE', '/scratch'],
  ['GET', '/fuzz/doc1'],
  ['PUT', '/fuzz/doc1'],
  ['DELETE', '/fuzz/doc1'],
  ['PUT', '/fuzz/doc1/file.txt'],
  ['POST', '/fuzz/_bulk_docs'],
  ['POST', '/fuzz/_find'],
  ['GET', '/fuzz/_all_docs'],
  ['GET', '/fuzz/_changes'],
  ['PUT', '/fuzz/_security'],
  ['GET', '/fuzz/_design/d/_view/v'],
] as const;

const HEADERS = [
  'Content-Type',
  'Content-Encoding',
  'Accept',
  'If-Match',
  'If-None-Match',
  'Destination',
  'Range',
  'Cookie',
  'X-Couch-Full-Commit',
  'X-Forwarded-For',
  'X-Forwarded-Host',
  'X-Auth-CouchDB-UserName',
];
const QUERY = [
  'rev',
  'revs',
  'conflicts',
  'include_docs',
  'limit',
  'skip',
  'startkey',
  'endkey',
  'descending',
  'since',
  'feed',
  'timeout',
  'heartbeat',
  'filter',
  'batch',
  'count',
  'keys',
];

const RUNS_PER_ROUTE = 12;
/** Cases over all routes asked in the host form, and over the gateway's own routes. */
const HOST_FORM_RUNS = 40;
const OWN_ROUTE_RUNS = 8;
const DOMAIN = 'couch.settee.test';

/**
 * The gateway's own routes (gateway/app.ts, health.ts), and paths that name no instance: the
 * bare prefix, a namespace without a name, a queue path on a gateway that serves no queue.
 */
const OWN_ROUTES = ['/healthz', '/readyz', '/metrics', '/', '/db', '/db/ns', '/queue/ns/q/v2/messages'];
/** Below this a body is written whole before CouchDB can answer and close (loopback socket buffers). */
const RESET_RACE_BODY_BYTES = 64 * 1024;
const DOWN_RUNS = 10;
const SEED = Number(process.env.FUZZ_SEED ?? 29);
const BOUNDED = { seed: SEED, endOnFailure: true } as const;

/**
 * The gateway's instance path (`/db/<namespace>/<name>/...`) in front of a real Apache CouchDB,
 * fuzzed route by route as the queue's API is (api-fuzz.test.ts): adversarial methods, path
 * segments (the instance's own included), headers, query parameters, bodies and credentials.
 * Whatever comes in: no 5xx (the engine is up), an answer within the timeout, CouchDB's error
 * shape `{"error", "reason"}` on every error, and nothing in the engine changed by a 4xx (its
 * databases, their update sequences and its configuration, read back). The same through the host
 * form (`<name>.<namespace>.<domain>`, Host headers fuzzed too) and on the gateway's own routes.
 * An instance whose pod never becomes ready may answer 503, never another 5xx.
 */
describe('the instance path under fuzzed requests', () => {
  const namespace = useTestNamespace('gw-fuzz');
  const admin = { username: 'admin', password: 'fuzz-password' };
  const counter = new FuzzCaseCounter();
  const adminAuth = (): string => basicAuth(admin.username, admin.password);
  let dataDir: string;
  let engine: CouchEngine;
  let gateway: Gateway;
  let up: string;
  let down: string;

  beforeAll(async () => {
    const { kubeConfig } = testControlPlane();
    const ref = { namespace: namespace.name, name: 'up' };
    const downRef = { namespace: namespace.name, name: 'down' };
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-gw-fuzz-'));
    [engine] = await Promise.all([
      startCouchEngine({ dataDir, admin }),
      createCouchInstance(kubeConfig, ref),
      createCouchInstance(kubeConfig, downRef),
    ]);
    await setInstancePod(kubeConfig, ref, { port: engine.port, ready: true });
    // Its pod never answers: no operator here wakes it, so a request waits out the wake timeout.
    await setInstancePod(kubeConfig, downRef, { port: 1, ready: false });
    gateway = await startTestGateway({
      kubeConfig,
      namespace: namespace.name,
      env: { SETTEE_GATEWAY_WAKE_TIMEOUT: '1s', SETTEE_GATEWAY_DOMAIN: DOMAIN },
    });
    up = instanceUrl(gateway, ref).replace(/\/$/, '');
    down = instanceUrl(gateway, downRef).replace(/\/$/, '');
    // CouchDB writes _users' _design/_auth a moment after /_up: a write no fuzzed request made.
    await waitFor(
      "the instance's /_up and _users' _design/_auth",
      async () =>
        (await request(`${up}/_up`)).status === 200 &&
        (await request(`${engine.url}/_users/_design/_auth`, { headers: { authorization: adminAuth() } }))
          .status === 200
          ? true
          : undefined,
      { timeoutMs: 60_000, intervalMs: 100 },
    );
  }, 120_000);

  afterAll(async () => {
    process.stdout.write(`${counter.report('instance path fuzz')}\n`);
    await gateway?.stop();
    await engine?.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  /** The databases the routes name, made again before each route (a fuzzed DELETE may succeed). */
  async function ensureFixtures(): Promise<void> {
    const direct = (method: string, p: string, body?: string) =>
      request(`${engine.url}${p}`, {
        method,
        headers: { authorization: adminAuth(), 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body }),
      });
    for (const db of ['fuzz', 'scratch']) await direct('PUT', `/${db}`);
    await direct('PUT', '/fuzz/doc1', '{"n":1}');
  }

  /** What a refused request must leave as it was: every database's sequence, and the configuration. */
  async function engineState(): Promise<string> {
    const get = async (p: string) =>
      (await request(`${engine.url}${p}`, { headers: { authorization: adminAuth() } })).body;
    const dbs = JSON.parse(await get('/_all_dbs')) as string[];
    const infos = await Promise.all(
      dbs.map(async (db) => {
        const info = JSON.parse(await get(`/${encodeURIComponent(db)}`)) as Record<string, unknown>;
        return [db, info.update_seq, info.doc_count, info.doc_del_count];
      }),
    );
    const security = await get('/fuzz/_security');
    return JSON.stringify([infos, security, JSON.parse(await get('/_node/_local/_config'))]);
  }

  const credentials: fc.Arbitrary<string | undefined> = fc.oneof(
    { arbitrary: fc.constant('admin'), weight: 4 },
    fc.constantFrom(
      undefined,
      'Basic',
      'Basic ',
      'Basic !!!',
      'Bearer x',
      basicAuth(admin.username, `${admin.password}x`),
      basicAuth('', ''),
      basicAuth(admin.username, `${admin.password}:extra`),
    ),
  );

  it('when a request carries a Basic credential that is not base64, then the gateway answers 401 unauthorized naming the Authorization header, without asking the engine (which answers it a 500) or waking the instance', async () => {
    const bad = { authorization: 'Basic !!!' };
    const direct = await request(`${engine.url}/fuzz`, { headers: bad });
    expect(direct.status).toBe(500);
    for (const credential of ['Basic !!!', 'Basic YWRtaW4', 'Basic YW=RtaW4=']) {
      for (const base of [up, down]) {
        const before = await engineState();
        const answer = await request(`${base}/fuzz/doc1`, {
          method: 'PUT',
          headers: { authorization: credential },
          body: '{}',
        });
        expect([base, credential, answer.status, JSON.parse(answer.body)]).toEqual([
          base,
          credential,
          401,
          { error: 'unauthorized', reason: expect.stringContaining('Authorization header') },
        ]);
        expect(await engineState()).toEqual(before);
      }
    }
  });

  /** A request aimed at one route: its method or another, a segment mangled, the instance's own too. */
  function requestFor(
    method: string,
    route: string,
  ): fc.Arbitrary<FuzzRequest & { instanceMangle: [number, string] | null }> {
    const segments = route.split('/');
    return fc
      .record({
        method: fc.oneof({ arbitrary: fc.constant(method), weight: 3 }, { arbitrary: anyMethod, weight: 1 }),
        mangle: sometimes(fc.tuple(fc.nat({ max: segments.length - 1 }), adversarialSegment), 3),
        instanceMangle: sometimes(fc.tuple(fc.constantFrom(0, 1), adversarialSegment), 8),
        query: adversarialQuery(QUERY),
        headers: adversarialHeaders(HEADERS),
        body: adversarialBody,
        auth: credentials,
      })
      .map(({ method: m, mangle, instanceMangle, query, headers, body, auth }) => {
        const routePath = mangle
          ? segments.map((s, i) => (i === mangle[0] && i > 0 ? mangle[1] : s)).join('/')
          : route;
        return {
          method: m,
          path: `${routePath}${query}`,
          instanceMangle,
          headers: {
            ...headers,
            ...(auth !== undefined && { authorization: auth === 'admin' ? adminAuth() : auth }),
          },
          ...(body !== undefined && m !== 'GET' && m !== 'HEAD' && { body }),
        };
      });
  }

  /**
   * Who made an answer that breaks a property: 'engine' when CouchDB itself gives it (the request
   * sent to the engine directly answers the same: its 500 for `_changes?timeout=x`, its 404 without
   * a reason, whatever the method: a write is sent to it again only when the gateway's answer was
   * a 5xx), but never its 500 to a Basic credential it cannot decode, which the gateway answers
   * itself (401); or when CouchDB refused
   * a large upload before reading it and reset the connection (a TCP race the gateway cannot win:
   * the answer is lost with the reset, nodejs/undici#259); 'gateway' otherwise, which fails the
   * property.
   */
  async function causeOf(fuzzed: FuzzRequest, answer: FuzzResponse): Promise<'engine' | 'gateway'> {
    if (
      answer.status === 502 &&
      (fuzzed.body?.length ?? 0) >= RESET_RACE_BODY_BYTES &&
      /did not answer \((ECONNRESET|EPIPE)\)/.test(answer.body)
    )
      return 'engine';
    if (/missing_padding|bad_char/.test(answer.body)) return 'gateway';
    if (fuzzed.method !== 'GET' && fuzzed.method !== 'HEAD' && answer.status < 500) return 'gateway';
    const direct = await sendFuzzRequest(engine.url, fuzzed).catch(() => undefined);
    return direct?.status === answer.status && direct.body === answer.body ? 'engine' : 'gateway';
  }

  /**
   * Sends `fuzzed` to `base` and checks the properties: no 5xx and CouchDB's error shape unless the
   * engine itself answers so (causeOf), and nothing in the engine changed by a 4xx.
   */
  async function askUp(name: string, base: string, fuzzed: FuzzRequest): Promise<void> {
    counter.count(name);
    const before = await engineState();
    const response = await sendFuzzRequest(base, fuzzed);
    counter.answered(response.status);
    const wellFormed = response.status < 400 || fuzzed.method === 'HEAD' || isCouchError(response.body);
    if (response.status >= 500 || !wellFormed) {
      const cause = await causeOf(fuzzed, response);
      expect([response.status, response.body, cause]).toEqual([response.status, response.body, 'engine']);
      counter.count(`(engine's own answer) ${name}`);
    }
    if (response.status >= 400 && response.status < 500) expect(await engineState()).toEqual(before);
  }

  it.each(ROUTES.map(([method, route]) => [`${method} ${route}`, method, route] as const))(
    'when %s is asked with fuzzed input, then no 5xx, every error is {"error","reason"}, and a 4xx changes nothing',
    async (name, method, route) => {
      await ensureFixtures();
      await fc.assert(
        fc.asyncProperty(requestFor(method, route), ({ instanceMangle, ...fuzzed }) =>
          askUp(name, mangledBase(up, instanceMangle), fuzzed),
        ),
        { numRuns: RUNS_PER_ROUTE, ...BOUNDED },
      );
    },
  );

  it('when routes are asked through the host form with fuzzed input and Host headers, then no 5xx, every error is {"error","reason"}, and a 4xx changes nothing', async () => {
    await ensureFixtures();
    const ref = { namespace: namespace.name, name: 'up' };
    const root = new URL(up).origin;
    await fc.assert(
      fc.asyncProperty(
        fc
          .constantFrom(...ROUTES)
          .chain(([method, route]) =>
            fc.tuple(
              fc.constant(`(host form) ${method} ${route}`),
              requestFor(method, route),
              hostHeader(ref, DOMAIN),
            ),
          ),
        ([name, { instanceMangle: _pathForm, ...fuzzed }, host]) =>
          askUp(name, root, { ...fuzzed, headers: { ...fuzzed.headers, host } }),
      ),
      { numRuns: HOST_FORM_RUNS, ...BOUNDED },
    );
  });

  it('when the gateway\'s own routes, and paths that name no instance, are asked with fuzzed input, then no 5xx but /readyz\'s 503, every error is {"error","reason"}, and nothing changes', async () => {
    const root = new URL(up).origin;
    await fc.assert(
      fc.asyncProperty(
        fc
          .constantFrom(...OWN_ROUTES)
          .chain((route) => fc.tuple(fc.constant(route), requestFor('GET', route))),
        async ([route, { instanceMangle: _pathForm, ...fuzzed }]) => {
          counter.count(`(gateway) ${route}`);
          const before = await engineState();
          const response = await sendFuzzRequest(root, fuzzed);
          counter.answered(response.status);
          const readiness = response.status === 503 && fuzzed.path.startsWith('/readyz');
          expect([fuzzed.method, fuzzed.path, response.status < 500 || readiness]).toEqual([
            fuzzed.method,
            fuzzed.path,
            true,
          ]);
          if (response.status >= 400 && !readiness && fuzzed.method !== 'HEAD')
            expect([response.body, isCouchError(response.body)]).toEqual([response.body, true]);
          expect(await engineState()).toEqual(before);
        },
      ),
      { numRuns: OWN_ROUTES.length * OWN_ROUTE_RUNS, ...BOUNDED },
    );
  });

  it('when any route of an instance whose pod never becomes ready is asked with fuzzed input, then it is a 4xx or a 503 with Retry-After, with {"error","reason"}', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .constantFrom(...ROUTES)
          .chain(([method, route]) =>
            requestFor(method, route).map((r) => [`${method} ${route}`, r] as const),
          ),
        async ([name, { instanceMangle, ...fuzzed }]) => {
          counter.count(`(not ready) ${name}`);
          const response = await sendFuzzRequest(mangledBase(down, instanceMangle), fuzzed);
          counter.answered(response.status);
          expect([response.status, response.status < 500 || response.status === 503]).toEqual([
            response.status,
            true,
          ]);
          if (response.status === 503) expect(response.headers['retry-after']).toMatch(/^\d+$/);
          if (response.status >= 400 && fuzzed.method !== 'HEAD')
            expect(isCouchError(response.body)).toBe(true);
        },
      ),
      { numRuns: DOWN_RUNS, ...BOUNDED },
    );
  });
});
