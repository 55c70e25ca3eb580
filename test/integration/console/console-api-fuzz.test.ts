import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CoreV1Api, CustomObjectsApi, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import fc from 'fast-check';
import { SETTEE_API_VERSION, SETTEE_GROUP, SETTEE_VERSION } from '../../../api/contract.js';
import { COUCH_INSTANCE_PLURAL } from '../../../api/couch-instance.js';
import { QUEUE_BINDING_PLURAL } from '../../../api/queue-binding.js';
import type { ConsoleServer } from '../../../console/console-server.js';
import { DEFAULT_WEB_DIR } from '../../../console/http/static-files.js';
import { provisionConsoleIdentity, provisionTenant } from '../../../local/tenant-access.js';
import { ConsoleClient, startTestConsole } from '../../helpers/console/console-harness.js';
import { testControlPlane } from '../../helpers/kube.js';
import {
  adversarialBody,
  adversarialHeaders,
  adversarialQuery,
  adversarialSegment,
  anyMethod,
  FuzzCaseCounter,
  isConsoleError,
  sendFuzzRequest,
  type FuzzRequest,
} from '../../helpers/fuzz/http-fuzz.js';

const suffix = crypto.randomBytes(3).toString('hex');
const tenant = { namespace: `console-fuzz-${suffix}`, serviceAccount: 'fuzzer' };
const consoleRef = { namespace: `console-fuzz-sys-${suffix}`, serviceAccount: 'settee-console' };
const NS = '{ns}';

/** Every route of the console's API but the live stream (it stays open while the page is). */
const ROUTES = [
  ['POST', '/api/session'],
  ['GET', '/api/session'],
  ['GET', '/api/session/namespaces'],
  ['PUT', '/api/session/namespace'],
  ['DELETE', '/api/session'],
  ['GET', `/api/namespaces/${NS}/instances`],
  ['POST', `/api/namespaces/${NS}/instances`],
  ['GET', `/api/namespaces/${NS}/instances/alpha`],
  ['GET', `/api/namespaces/${NS}/instances/alpha/credentials`],
  ['PATCH', `/api/namespaces/${NS}/instances/alpha/keep-alive`],
  ['DELETE', `/api/namespaces/${NS}/instances/scratch`],
  ['GET', `/api/namespaces/${NS}/bindings`],
  ['GET', `/api/namespaces/${NS}/bindings/cache`],
  ['GET', `/api/namespaces/${NS}/bindings/cache/env`],
  ['GET', `/api/namespaces/${NS}/bindings/cache/env-file`],
  ['POST', `/api/namespaces/${NS}/bindings/cache/rotate-signing-keys`],
  ['GET', `/api/namespaces/${NS}/bindings/cache/messages`],
  ['GET', `/api/namespaces/${NS}/bindings/cache/messages/msg_1`],
  ['DELETE', `/api/namespaces/${NS}/bindings/cache/messages/msg_1`],
  ['GET', `/api/namespaces/${NS}/bindings/cache/dlq`],
  ['POST', `/api/namespaces/${NS}/bindings/cache/dlq/dlq_1/retry`],
  ['DELETE', `/api/namespaces/${NS}/bindings/cache/dlq/dlq_1`],
  ['GET', `/api/namespaces/${NS}/bindings/cache/workflow-runs`],
  ['GET', `/api/namespaces/${NS}/bindings/cache/workflow-runs/wfr_1/waiters`],
  ['DELETE', `/api/namespaces/${NS}/bindings/cache/workflow-runs/wfr_1`],
] as const;

/**
 * The console's routes outside its API: health, the page and its own routes, an asset (`{asset}`,
 * one of the build's), one missing, and paths that try to leave the build's folder.
 */
const PAGE_ROUTES = [
  '/healthz',
  '/readyz',
  '/',
  '/instances/alpha',
  '/assets/{asset}',
  '/assets/missing.js',
  '/assets/..%2f..%2f..%2fpackage.json',
  '/..%2f..%2f..%2fpackage.json',
];
const RUNS_PER_PAGE_ROUTE = 5;

const HEADERS = ['Content-Type', 'Accept', 'Sec-Fetch-Site', 'X-Forwarded-Proto', 'X-Forwarded-For'];
const QUERY = ['cursor', 'count', 'state', 'namespace', 'watch', 'resourceVersion'];
const RUNS_PER_ROUTE = 10;
const SEED = Number(process.env.FUZZ_SEED ?? 29);
const BOUNDED = { seed: SEED, endOnFailure: true } as const;

/**
 * The console's API fuzzed route by route (api-fuzz.test.ts's style) against a real API server, as
 * a signed-in tenant and as strangers: adversarial methods, path segments, headers, queries and
 * bodies (random JSON and shapes close to what the page sends), with the session cookie, CSRF
 * token and Origin right, wrong or missing. Whatever comes in: no 5xx but a 503 for the queue,
 * which this console has no address for; an answer within the timeout; the console's error shape
 * `{"error", "message"}`; and nothing in the tenant's namespace changed by a 4xx (its instances,
 * bindings and Secrets, read back with their resourceVersions).
 */
describe('the console API under fuzzed requests', () => {
  const { kubeConfig: admin } = testControlPlane();
  const custom = admin.makeApiClient(CustomObjectsApi);
  const core = admin.makeApiClient(CoreV1Api);
  const counter = new FuzzCaseCounter();
  let server: ConsoleServer;
  let token: string;
  let session: { cookie: string; csrf: string };
  /** The built page's files (console/web/dist, built by startTestConsole): what its routes may answer. */
  let page: { contents: Set<string>; assets: string[] };

  const crd = (plural: string) => ({
    group: SETTEE_GROUP,
    version: SETTEE_VERSION,
    namespace: tenant.namespace,
    plural,
  });

  beforeAll(async () => {
    token = (await provisionTenant(admin, tenant)).token;
    await core.createNamespace({ body: { metadata: { name: consoleRef.namespace } } });
    const consoleToken = await provisionConsoleIdentity(admin, consoleRef);
    await core.createNamespacedSecret({
      namespace: tenant.namespace,
      body: { metadata: { name: 'cache-auth' }, stringData: { password: 'pw' } },
    });
    await custom.createNamespacedCustomObject({
      ...crd(QUEUE_BINDING_PLURAL),
      body: {
        apiVersion: SETTEE_API_VERSION,
        kind: 'QueueBinding',
        metadata: { name: 'cache' },
        spec: {
          engine: 'redis',
          connection: {
            host: '127.0.0.1',
            port: 1,
            passwordSecretRef: { name: 'cache-auth', key: 'password' },
          },
        },
      },
    });
    server = await startTestConsole({ admin, consoleToken });
    page = pageFiles(DEFAULT_WEB_DIR);
    const client = new ConsoleClient(server.url);
    expect((await client.signIn(token, tenant.namespace)).status).toBe(201);
    session = { cookie: client.cookie ?? '', csrf: client.csrfToken };
  }, 60_000);

  afterAll(async () => {
    process.stdout.write(`${counter.report('console API fuzz')}\n`);
    await server?.stop();
    for (const name of [tenant.namespace, consoleRef.namespace])
      await core.deleteNamespace({ name }).catch(() => undefined);
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    const role = `settee-console-${consoleRef.namespace}-${consoleRef.serviceAccount}`;
    await rbac.deleteClusterRoleBinding({ name: role }).catch(() => undefined);
    await rbac.deleteClusterRole({ name: role }).catch(() => undefined);
  });

  /** The instances the routes name, made again before each route (a fuzzed DELETE may succeed). */
  async function ensureFixtures(): Promise<void> {
    for (const name of ['alpha', 'scratch'])
      await custom
        .createNamespacedCustomObject({
          ...crd(COUCH_INSTANCE_PLURAL),
          body: {
            apiVersion: SETTEE_API_VERSION,
            kind: 'CouchInstance',
            metadata: { name },
            spec: { plan: 'free' },
          },
        })
        .catch(() => undefined);
  }

  /** What a refused request must leave as it was: each object of the namespace and its version. */
  async function namespaceState(): Promise<string> {
    const versions = (items: Array<{ metadata?: { name?: string; resourceVersion?: string } }>) =>
      items.map((i) => `${i.metadata?.name}@${i.metadata?.resourceVersion}`).sort();
    const list = async (plural: string) =>
      versions(
        ((await custom.listNamespacedCustomObject(crd(plural))) as { items: Array<{ metadata?: object }> })
          .items,
      );
    return JSON.stringify([
      await list(COUCH_INSTANCE_PLURAL),
      await list(QUEUE_BINDING_PLURAL),
      versions((await core.listNamespacedSecret({ namespace: tenant.namespace })).items),
    ]);
  }

  /** Bodies: the adversarial ones, or objects shaped like the page's with fuzzed values. */
  const body: fc.Arbitrary<Buffer | undefined> = fc.oneof(
    adversarialBody,
    fc
      .record(
        {
          token: fc.oneof(fc.constant('valid'), fc.string({ maxLength: 40 })),
          namespace: fc.oneof(fc.constant(tenant.namespace), fc.string({ maxLength: 70 }), fc.constant(null)),
          name: fc.oneof(fc.string({ maxLength: 70 }), fc.constantFrom('alpha', 'new-one', 'A', '-x', '')),
          plan: fc.oneof(fc.constantFrom('free', 'paid'), fc.anything()),
          keepAlive: fc.anything(),
          idleAfter: fc.oneof(fc.constantFrom('5m', '0s', '-1m', '99999h'), fc.string({ maxLength: 10 })),
          version: fc.string({ maxLength: 12 }),
        },
        { requiredKeys: [] },
      )
      .map((o) => Buffer.from(JSON.stringify(o.token === 'valid' ? { ...o, token } : o))),
  );

  /** Who sends it: the signed-in tenant (cookie, CSRF token, same Origin), with parts wrong or missing. */
  const caller: fc.Arbitrary<Record<string, string>> = fc
    .record({
      cookie: fc.constantFrom('valid', 'valid', 'valid', 'none', 'garbage', 'tampered'),
      csrf: fc.constantFrom('valid', 'valid', 'none', 'wrong'),
      origin: fc.constantFrom('self', 'self', 'none', 'other', 'null'),
    })
    .map(({ cookie, csrf, origin }) => {
      const headers: Record<string, string> = {};
      if (cookie === 'valid') headers.cookie = session.cookie;
      if (cookie === 'garbage') headers.cookie = 'settee-console=%%%not-a-session';
      if (cookie === 'tampered') headers.cookie = `${session.cookie.slice(0, -4)}AAAA`;
      if (csrf !== 'none') headers['x-csrf-token'] = csrf === 'valid' ? session.csrf : 'x'.repeat(43);
      const origins = { self: server.url, other: 'http://evil.example', null: 'null' } as const;
      if (origin !== 'none') headers.origin = origins[origin];
      return headers;
    });

  function requestFor(method: string, route: string): fc.Arbitrary<FuzzRequest> {
    const segments = route.split('/');
    return fc
      .record({
        method: fc.oneof({ arbitrary: fc.constant(method), weight: 3 }, { arbitrary: anyMethod, weight: 1 }),
        mangle: fc.oneof(
          { arbitrary: fc.constant(null), weight: 3 },
          { arbitrary: fc.tuple(fc.nat({ max: segments.length - 1 }), adversarialSegment), weight: 1 },
        ),
        otherNamespace: fc.oneof(
          { arbitrary: fc.constant(undefined), weight: 5 },
          { arbitrary: fc.constantFrom('kube-system', 'default', consoleRef.namespace), weight: 1 },
        ),
        query: adversarialQuery(QUERY),
        headers: adversarialHeaders(HEADERS),
        caller,
        body,
      })
      .map(({ method: m, mangle, otherNamespace, query, headers, caller: who, body: b }) => {
        const path = segments
          .map((s, i) => (mangle && i === mangle[0] && i > 1 ? mangle[1] : s))
          .join('/')
          .replace(NS, otherNamespace ?? tenant.namespace);
        return {
          method: m,
          path: `${path}${query}`,
          headers: { 'content-type': 'application/json', ...headers, ...who },
          ...(b !== undefined && m !== 'GET' && m !== 'HEAD' && { body: b }),
        };
      });
  }

  it.each(ROUTES.map(([method, route]) => [`${method} ${route}`, method, route] as const))(
    'when %s is asked with fuzzed input, then no 5xx but the queue\'s 503, every error is {"error","message"}, and a 4xx changes nothing',
    async (name, method, route) => {
      await ensureFixtures();
      await fc.assert(
        fc.asyncProperty(requestFor(method, route), async (request) => {
          counter.count(name);
          const before = await namespaceState();
          const response = await sendFuzzRequest(server.url, request);
          counter.answered(response.status);
          expect([response.status, response.status < 500 || response.status === 503]).toEqual([
            response.status,
            true,
          ]);
          if (response.status >= 400 && request.method !== 'HEAD')
            expect([response.body, isConsoleError(response.body)]).toEqual([response.body, true]);
          if (response.status >= 400 && response.status < 500) expect(await namespaceState()).toEqual(before);
        }),
        { numRuns: RUNS_PER_ROUTE, ...BOUNDED },
      );
    },
  );

  it('when the page, its assets and the health routes are asked with fuzzed input, then no 5xx, a 200 to a GET is health or a file of the build, an error to a GET is {"error","message"}, and nothing changes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .constantFrom(...PAGE_ROUTES)
          .chain((route) =>
            fc.tuple(
              fc.constant(route),
              route.includes('{asset}')
                ? fc
                    .constantFrom(...page.assets)
                    .chain((asset) => requestFor('GET', route.replace('{asset}', asset)))
                : requestFor('GET', route),
            ),
          ),
        async ([route, request]) => {
          counter.count(`(page) ${route}`);
          const before = await namespaceState();
          const response = await sendFuzzRequest(server.url, request);
          counter.answered(response.status);
          const said = [request.method, request.path, response.status];
          expect([...said, response.status < 500]).toEqual([...said, true]);
          const health = /^\/(healthz|readyz)(\?|$)/.test(request.path);
          if (response.status === 200 && request.method === 'GET' && !health) {
            expect([...said, page.contents.has(response.body)]).toEqual([...said, true]);
            if (route.includes('{asset}')) counter.count('(page) an asset of the build, served whole');
          }
          // Other methods are Express's own answers (serve-static's bare 405, the HTML 404): not the API.
          if (response.status >= 400 && request.method === 'GET')
            expect([...said, response.body, isConsoleError(response.body)]).toEqual([
              ...said,
              response.body,
              true,
            ]);
          expect(await namespaceState()).toEqual(before);
        },
      ),
      { numRuns: PAGE_ROUTES.length * RUNS_PER_PAGE_ROUTE, ...BOUNDED },
    );
  });
});

/** The build's files as the console sends them (utf8 text), and its assets' names. */
function pageFiles(dir: string): { contents: Set<string>; assets: string[] } {
  const files = fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((f) => f.isFile());
  return {
    contents: new Set(files.map((f) => fs.readFileSync(path.join(f.parentPath, f.name)).toString('utf8'))),
    assets: files
      .filter((f) => f.parentPath.endsWith('assets') && !f.name.endsWith('.map'))
      .map((f) => f.name),
  };
}
