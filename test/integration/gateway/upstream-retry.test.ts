import type http from 'node:http';
import type net from 'node:net';
import { useBothPathGateways } from '../../helpers/gateway/both-paths.js';
import { request } from '../../helpers/gateway/http-request.js';
import { type RecordingEngine, startRecordingEngine } from '../../helpers/gateway/recording-engine.js';

/**
 * An instance may close a kept-alive connection just as the gateway writes the next request on it
 * (its idle timeout, a restart): the FIN (or a reset) is still unread when the request goes out,
 * and that request used to be answered 502 (6 of 40 in session 17's pipelined probe). A request
 * with a safe method and no body, closed on before any of its response, is sent once more on a new
 * connection; anything else stays a 502. Both paths, the fast path's splice and node:http with its
 * undici pool, must agree. The stand-in engine closes at the moment chosen: on the request itself,
 * which is the same to the gateway as a close that crossed it. Each fails on the code before the
 * resend (every close a 502) or, for the 502 cases, with the rule widened to any method or body.
 */

type Drop = 'fin' | 'rst';

/** Which requests the engine closes their connection on, unanswered. */
interface Drops {
  how: Drop;
  /** How many more requests to close on. */
  left: number;
  /** Only on a connection that carried an earlier request, or on a new one too. */
  which: 'reused' | 'all';
}

/** Answers each request, or closes its connection unanswered while `drops` says so. */
function startEngine(drops: Drops): Promise<RecordingEngine> {
  const exchanges = new WeakMap<net.Socket, number>();
  return startRecordingEngine((req: http.IncomingMessage, res: http.ServerResponse) => {
    const n = (exchanges.get(req.socket) ?? 0) + 1;
    exchanges.set(req.socket, n);
    if (drops.left > 0 && (drops.which === 'all' || n > 1)) {
      drops.left -= 1;
      if (drops.how === 'rst') req.socket.resetAndDestroy();
      else req.socket.destroy();
      return;
    }
    const text = JSON.stringify({ ok: true, n });
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
    res.end(req.method === 'HEAD' ? undefined : text);
  });
}

describe('a request on an upstream connection the instance closed', () => {
  const setup = useBothPathGateways('gw-upretry', () => startEngine(drops));
  const drops: Drops = { how: 'fin', left: 0, which: 'reused' };
  const url = (fastPath: 'on' | 'off', rest: string): string =>
    `${setup.gateways[fastPath].url}/db/${setup.namespace.name}/paid${rest}`;

  const spliced = async (fastPath: 'on' | 'off'): Promise<number> => {
    const metrics = (await request(`${setup.gateways[fastPath].url}/metrics`)).body;
    const line = metrics.split('\n').find((l) => l.startsWith('settee_gateway_spliced_requests_total '));
    return line === undefined ? 0 : Number(line.split(' ')[1]);
  };

  /** One answered request first, so the next one goes out on a kept-alive (reused) connection. */
  const onReusedConnection = async (
    fastPath: 'on' | 'off',
    close: Omit<Drops, 'left'> & { times: number },
    send: () => ReturnType<typeof request>,
  ): Promise<{ answer: Awaited<ReturnType<typeof request>>; reached: string[] }> => {
    drops.left = 0;
    expect((await request(url(fastPath, '/warm'), { timeoutMs: 10_000 })).status).toBe(200);
    const seen = setup.engine.seen.length;
    Object.assign(drops, { how: close.how, which: close.which, left: close.times });
    try {
      return { answer: await send(), reached: setup.engine.seen.slice(seen) };
    } finally {
      drops.left = 0;
    }
  };

  const cases = (['on', 'off'] as const).flatMap((fastPath) =>
    (
      [
        ['GET', 'fin'],
        ['HEAD', 'rst'],
        ['OPTIONS', 'fin'],
      ] as const
    ).map(([method, how]) => [method, how, fastPath] as const),
  );

  it.each(cases)(
    'when a %s without a body is closed on (%s) before any response byte (fast path %s), then it is sent once more and answered',
    async (method, how, fastPath) => {
      const before = await spliced(fastPath);
      const { answer, reached } = await onReusedConnection(fastPath, { how, which: 'reused', times: 1 }, () =>
        request(url(fastPath, '/doc'), { method, timeoutMs: 10_000 }),
      );
      expect(answer.status).toBe(200);
      if (method !== 'HEAD') expect(JSON.parse(answer.body)).toEqual({ ok: true, n: 1 });
      expect(reached).toEqual([`${method} /doc`, `${method} /doc`]);
      // The warm-up and this request took the path under test.
      expect(await spliced(fastPath)).toBe(fastPath === 'on' ? before + 2 : 0);
    },
  );

  const notRetried = (['on', 'off'] as const).flatMap((fastPath) =>
    (
      [
        ['POST', '{"a":1}'],
        ['PUT', '{"a":1}'],
        ['DELETE', undefined],
        ['GET', '{"a":1}'],
      ] as const
    ).map(([method, body]) => [method, body === undefined ? 'no body' : 'a body', fastPath, body] as const),
  );

  it.each(notRetried)(
    'when a %s with %s is closed on (fast path %s), then it is not sent again and the client gets a 502 in CouchDB shape',
    async (method, _what, fastPath, body) => {
      const { answer, reached } = await onReusedConnection(
        fastPath,
        { how: 'fin', which: 'reused', times: 1 },
        () =>
          request(url(fastPath, '/doc'), {
            method,
            timeoutMs: 10_000,
            ...(body === undefined ? {} : { body, headers: { 'Content-Type': 'application/json' } }),
          }),
      );
      expect(answer.status).toBe(502);
      expect(JSON.parse(answer.body)).toMatchObject({
        error: expect.any(String),
        reason: expect.any(String),
      });
      expect(reached).toEqual([`${method} /doc`]);
    },
  );

  it.each(['on', 'off'] as const)(
    'when its second try is closed on too (fast path %s), then the GET gets a 502 after two tries, not more',
    async (fastPath) => {
      // Three closes ready: a third try would be closed on as well, and seen.
      const { answer, reached } = await onReusedConnection(
        fastPath,
        { how: 'fin', which: 'all', times: 3 },
        () => request(url(fastPath, '/doc'), { timeoutMs: 10_000 }),
      );
      expect(answer.status).toBe(502);
      expect(JSON.parse(answer.body)).toMatchObject({ error: expect.any(String) });
      expect(reached).toEqual(['GET /doc', 'GET /doc']);
    },
  );
});
