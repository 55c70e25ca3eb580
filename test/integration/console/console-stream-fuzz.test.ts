import http from 'node:http';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import fc from 'fast-check';
import { SessionSealer } from '../../../console/session/session-sealer.js';
import { COOKIE_NAME } from '../../../console/session/session-cookie.js';
import { waitFor } from '../../../local/wait.js';
import { ConsoleClient, TEST_SESSION_KEY } from '../../helpers/console/console-harness.js';
import { INSTANCE_REF, useConsoleTenants } from '../../helpers/console/console-tenants.js';
import {
  adversarialHeaders,
  adversarialQuery,
  adversarialSegment,
  anyMethod,
  FUZZ_ANSWER_TIMEOUT_MS,
  FuzzCaseCounter,
  isConsoleError,
} from '../../helpers/fuzz/http-fuzz.js';
import { apiserverOpenWatches } from '../../helpers/kube/apiserver-requests.js';
import { testControlPlane } from '../../helpers/kube.js';

const SINGLE_RUNS = 60;
const BURST_RUNS = 12;
const SEED = Number(process.env.FUZZ_SEED ?? 29);
const BOUNDED = { seed: SEED, endOnFailure: true } as const;
const HEADERS = ['Last-Event-ID', 'Accept', 'Cache-Control', 'Sec-Fetch-Site', 'X-Forwarded-For'];
const QUERY = ['resourceVersion', 'watch', 'timeoutSeconds', 'namespace', 'allowWatchBookmarks', 'limit'];

/** An open server-sent stream as a test reads it: what has come so far, and a way to wait for more. */
interface OpenStream {
  status: number;
  contentType: string;
  text(): string;
  /** Resolves once the text so far matches, rejects when the stream ends or the time is out. */
  until(pattern: RegExp, timeoutMs?: number): Promise<void>;
  close(): void;
}

/** Opens `path` with node:http (any method and header), resolving when the head is in. */
function openStream(
  baseUrl: string,
  path: string,
  options: { method?: string; headers?: http.OutgoingHttpHeaders } = {},
): { opened: Promise<OpenStream>; close(): void } {
  const req = http.request(`${baseUrl}${path}`, {
    method: options.method ?? 'GET',
    headers: options.headers,
    agent: false,
  });
  const opened = new Promise<OpenStream>((resolve, reject) => {
    const timer = setTimeout(
      () => req.destroy(new Error(`no head within ${FUZZ_ANSWER_TIMEOUT_MS} ms`)),
      FUZZ_ANSWER_TIMEOUT_MS,
    );
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.on('response', (res) => {
      clearTimeout(timer);
      let text = '';
      let ended = false;
      const waiting = new Set<() => void>();
      const wake = () => waiting.forEach((w) => w());
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        wake();
      });
      res.on('close', () => {
        ended = true;
        wake();
      });
      res.on('error', () => undefined);
      resolve({
        status: res.statusCode ?? 0,
        contentType: String(res.headers['content-type'] ?? ''),
        text: () => text,
        until: (pattern, timeoutMs = FUZZ_ANSWER_TIMEOUT_MS) =>
          new Promise<void>((done, fail) => {
            const check = () => {
              if (pattern.test(text)) finish();
              else if (ended) finish(new Error(`the stream ended before ${pattern}: ${text.slice(0, 400)}`));
            };
            const timer = setTimeout(
              () => finish(new Error(`no ${pattern} within ${timeoutMs} ms: ${text.slice(-400)}`)),
              timeoutMs,
            );
            const finish = (err?: Error) => {
              clearTimeout(timer);
              waiting.delete(check);
              if (err) fail(err);
              else done();
            };
            waiting.add(check);
            check();
          }),
        close: () => req.destroy(),
      });
    });
    req.end();
  });
  opened.catch(() => undefined);
  return { opened, close: () => req.destroy() };
}

/**
 * The console's live stream (GET /api/namespaces/:namespace/instances/stream) fuzzed against a real
 * API server: sessions of tenant A, of tenant B, of a token the API server refuses, none or a broken
 * cookie; its own namespace, the other tenant's, a system one or a mangled segment; fuzzed
 * resourceVersion (current, old, zero, ahead of the server, past int64, not a number), query,
 * Last-Event-ID and other headers; bursts of concurrent opens closed at random moments. Whatever
 * comes in: no 5xx; an error is {"error","message"}; an open stream brings its first bytes and, for
 * the tenant's own namespace, a change made after it opened (a resumed watch that cannot resume
 * lists again), or says forbidden / session-ended; never an event naming the other tenant's
 * instance; and once the clients close, the server holds no stream slot and no watch.
 */
describe('the console live stream under fuzzed requests', () => {
  const t = useConsoleTenants();
  const { kubeConfig: admin } = testControlPlane();
  const custom = admin.makeApiClient(CustomObjectsApi);
  const counter = new FuzzCaseCounter();
  let sessions: Record<'A' | 'B' | 'refused', string>;
  let watchesBefore = 0;
  let mark = 0;

  const instanceOf = { A: 'alpha', B: 'bravo-secret-db' } as const;
  const namespaceOf = (tenant: 'A' | 'B') => (tenant === 'A' ? t.tenantA : t.tenantB).namespace;

  beforeAll(async () => {
    const signedIn = async (token: string) => {
      const client = new ConsoleClient(t.server.url);
      expect((await client.signIn(token)).status).toBe(201);
      return client.cookie ?? '';
    };
    // A session the console sealed itself, holding a token the API server does not know (revoked).
    const refused = await new SessionSealer(TEST_SESSION_KEY).seal({
      id: 'refused-session',
      token: 'not-a-token-the-api-server-knows',
      username: 'system:serviceaccount:gone:gone',
      namespace: t.tenantA.namespace,
      csrfToken: 'x'.repeat(43),
      expiresAt: Date.now() + 3_600_000,
    });
    sessions = {
      A: await signedIn(t.tokenA),
      B: await signedIn(t.tokenB),
      refused: `${COOKIE_NAME}=${refused}`,
    };
    watchesBefore = await apiserverOpenWatches(admin, INSTANCE_REF.plural);
  }, 60_000);

  afterAll(() => process.stdout.write(`${counter.report('console live stream fuzz')}\n`));

  /** Sets the tenant's instance's idleAfter to a value no earlier case used: the change a stream must bring. */
  async function change(tenant: 'A' | 'B'): Promise<string> {
    const idleAfter = `${1_000 + (mark += 1)}s`;
    await custom.patchNamespacedCustomObject(
      {
        ...INSTANCE_REF,
        namespace: namespaceOf(tenant),
        name: instanceOf[tenant],
        body: { spec: { hibernation: { idleAfter } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    return idleAfter;
  }

  async function currentVersion(): Promise<string> {
    const object = (await custom.getNamespacedCustomObject({
      ...INSTANCE_REF,
      namespace: t.tenantA.namespace,
      name: instanceOf.A,
    })) as { metadata: { resourceVersion: string } };
    return object.metadata.resourceVersion;
  }

  /** Once every client has closed: no stream slot held, no watch of instances left on the API server. */
  async function expectNothingLeftOpen(): Promise<void> {
    await waitFor(
      'the console to free every stream slot and end every watch',
      async () =>
        t.server.limiter.total === 0 &&
        (await apiserverOpenWatches(admin, INSTANCE_REF.plural)) <= watchesBefore
          ? true
          : undefined,
      { timeoutMs: 15_000, intervalMs: 100 },
    ).catch(async (err: Error) => {
      const watches = await apiserverOpenWatches(admin, INSTANCE_REF.plural);
      throw new Error(
        `${err.message} (slots ${t.server.limiter.total}, watches ${watches} > ${watchesBefore})`,
      );
    });
  }

  // Found by the fuzz (seed 29): the stream watched from the resourceVersion the page sent, and one
  // ahead of the API server's opened a watch that stayed silent (keep-alives only) for good. Every
  // stream now lists on its own, so the parameter is refused rather than silently ignored.
  it("when a stream is opened with a resourceVersion (ahead of the API server's), then it answers 400 naming resourceVersion and opens no watch", async () => {
    const ahead = String(Number(await currentVersion()) + 100_000);
    const { opened, close } = openStream(
      t.server.url,
      `/api/namespaces/${t.tenantA.namespace}/instances/stream?resourceVersion=${ahead}`,
      { headers: { cookie: sessions.A } },
    );
    try {
      const stream = await opened;
      expect(stream.status).toBe(400);
      await stream.until(/\}$/);
      expect(JSON.parse(stream.text())).toEqual(
        expect.objectContaining({
          error: 'bad-input',
          message: expect.stringContaining('resourceVersion'),
          fields: { resourceVersion: expect.any(String) },
        }),
      );
    } finally {
      close();
    }
    await expectNothingLeftOpen();
  });

  const resourceVersion = fc.constantFrom(
    'current',
    'ahead',
    '0',
    '1',
    '99999999999999999999',
    '-1',
    '1e3',
    'abc',
    '',
  );

  const single = fc.record({
    who: fc.constantFrom('A', 'A', 'A', 'B', 'refused', 'none', 'garbage'),
    where: fc.oneof(
      { arbitrary: fc.constantFrom('own', 'own', 'other', 'kube-system'), weight: 4 },
      { arbitrary: adversarialSegment, weight: 1 },
    ),
    resourceVersion: fc.option(resourceVersion, { freq: 2 }),
    query: adversarialQuery(QUERY),
    headers: adversarialHeaders(HEADERS),
    method: fc.oneof({ arbitrary: fc.constant('GET'), weight: 6 }, { arbitrary: anyMethod, weight: 1 }),
  });

  it('when single streams are opened with fuzzed sessions, namespaces, resourceVersions, queries and headers, then no 5xx, errors are {"error","message"}, an own stream brings a later change, and no other tenant’s event', async () => {
    await fc.assert(
      fc.asyncProperty(single, async (input) => {
        const tenant = input.who === 'B' ? 'B' : 'A';
        const other = tenant === 'A' ? 'B' : 'A';
        const namespace =
          input.where === 'own'
            ? namespaceOf(tenant)
            : input.where === 'other'
              ? namespaceOf(other)
              : input.where;
        const rv =
          input.resourceVersion === 'current'
            ? await currentVersion()
            : input.resourceVersion === 'ahead'
              ? String(Number(await currentVersion()) + 100_000)
              : input.resourceVersion;
        const query = [input.query, rv === null ? '' : `resourceVersion=${encodeURIComponent(rv)}`]
          .filter(Boolean)
          .join('&')
          .replace(/^\??/, '?')
          .replace(/^\?$/, '');
        const cookie = { A: sessions.A, B: sessions.B, refused: sessions.refused, none: undefined }[
          input.who as 'A'
        ];
        const headers = {
          ...input.headers,
          ...(input.who === 'garbage' ? { cookie: `${COOKIE_NAME}=%%%not-a-session` } : cookie && { cookie }),
        };
        const path = `/api/namespaces/${namespace}/instances/stream${query}`;
        const said = [input.who, input.method, path, rv];
        counter.count(`${input.method === 'GET' ? 'GET' : 'other method'} stream as ${input.who}`);
        const { opened, close } = openStream(t.server.url, path, { method: input.method, headers });
        try {
          const stream = await opened;
          counter.answered(stream.status);
          expect([...said, stream.status < 500]).toEqual([...said, true]);
          if (stream.status !== 200) {
            if (input.method !== 'HEAD') {
              await stream.until(/\}$/).catch(() => undefined);
              expect([...said, stream.text(), isConsoleError(stream.text())]).toEqual([
                ...said,
                stream.text(),
                true,
              ]);
            }
            return;
          }
          expect([...said, stream.contentType]).toEqual([
            ...said,
            expect.stringMatching(/^text\/event-stream/),
          ]);
          if (input.method === 'HEAD') return;
          const signedIn = input.who === 'A' || input.who === 'B';
          if (signedIn && namespace === namespaceOf(tenant)) {
            const idleAfter = await change(tenant);
            await stream.until(new RegExp(`"idleAfter":"${idleAfter}"`));
            counter.count('(a stream of its own namespace brought the change)');
          } else if (signedIn) {
            await stream.until(/^event: forbidden$/m);
          } else {
            await stream.until(/^event: session-ended$/m);
          }
          expect([...said, stream.text().includes(instanceOf[other])]).toEqual([...said, false]);
          expect([...said, /^event: unavailable$/m.test(stream.text())]).toEqual([...said, false]);
        } finally {
          close();
        }
      }),
      { numRuns: SINGLE_RUNS, ...BOUNDED },
    );
    await expectNothingLeftOpen();
  }, 300_000);

  it('when bursts of streams of one session open at once and close at random moments, then each is a stream or a 429, and afterwards no slot or watch is left and a new stream opens', async () => {
    const close = fc.constantFrom('at once', 'after the head', 'after the first event');
    await fc.assert(
      fc.asyncProperty(fc.array(close, { minLength: 2, maxLength: 10 }), async (closes) => {
        counter.count('burst of concurrent streams');
        const path = `/api/namespaces/${t.tenantA.namespace}/instances/stream`;
        const opens = closes.map(() => openStream(t.server.url, path, { headers: { cookie: sessions.A } }));
        const statuses = await Promise.all(
          opens.map(async ({ opened, close: cut }, i) => {
            if (closes[i] === 'at once') {
              cut();
              return 'closed';
            }
            try {
              const stream = await opened;
              counter.answered(stream.status);
              if (stream.status === 200 && closes[i] === 'after the first event')
                await stream.until(/^event: \w+\ndata: /m);
              return stream.status;
            } finally {
              cut();
            }
          }),
        );
        expect(statuses.filter((s) => s !== 'closed' && s !== 200 && s !== 429)).toEqual([]);
        await expectNothingLeftOpen();
      }),
      { numRuns: BURST_RUNS, ...BOUNDED },
    );
    const { opened, close: cut } = openStream(
      t.server.url,
      `/api/namespaces/${t.tenantA.namespace}/instances/stream`,
      {
        headers: { cookie: sessions.A },
      },
    );
    try {
      const stream = await opened;
      expect(stream.status).toBe(200);
      await stream.until(/^event: snapshot$/m);
    } finally {
      cut();
    }
  }, 300_000);
});
