import type { Gateway } from '../../../gateway/gateway.js';
import {
  createCouchInstance,
  setInstancePod,
  startTestGateway,
} from '../../helpers/gateway/gateway-harness.js';
import { basicAuth, request } from '../../helpers/gateway/http-request.js';
import { RawConnection } from '../../helpers/gateway/raw-connection.js';
import { type RecordingEngine, startRecordingEngine } from '../../helpers/gateway/recording-engine.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';

/**
 * What the fast path (SETTEE_GATEWAY_FAST_PATH, docs/data-path.md Option A) must leave to the full
 * path, or finish before a shutdown, through the real gateway: a Basic credential the engine cannot
 * decode, a free instance's database create (counted first), and a drain while exchanges are
 * spliced (the review's finding 7). Each case was checked by removing the behaviour from the code.
 */

/** A stand-in engine with three databases, a slow path, and a record of what reached it. */
const startEngine = (): Promise<RecordingEngine> =>
  startRecordingEngine((req, res) => {
    const json = (status: number, value: unknown): void => {
      const text = JSON.stringify(value);
      res.writeHead(status, {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(text),
      });
      res.end(text);
    };
    if (req.url === '/_all_dbs') return json(200, ['one', 'two', 'three']);
    if (req.method === 'PUT' && req.url === '/newdb') return json(201, { ok: true });
    if (req.url === '/slow') return void setTimeout(() => json(200, { slow: true }), 600);
    json(200, { url: req.url });
  });

const spliced = async (gateway: Gateway): Promise<number> => {
  const metrics = (await request(`${gateway.url}/metrics`)).body;
  const line = metrics.split('\n').find((l) => l.startsWith('settee_gateway_spliced_requests_total '));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
};

describe('the fast path leaves to the full path what only it does', () => {
  const namespace = useTestNamespace('gw-fast-declines');
  const { kubeConfig } = testControlPlane();
  let engine: RecordingEngine;
  let gateway: Gateway;
  const start = (env: Record<string, string> = {}): Promise<Gateway> =>
    startTestGateway({
      kubeConfig,
      namespace: namespace.name,
      env: { SETTEE_GATEWAY_FAST_PATH: 'true', SETTEE_GATEWAY_FREE_DATABASES: '3', ...env },
      writers: { activityLease: async () => undefined, wakeRequest: async () => undefined },
    });
  const url = (instance: string, rest: string, at = gateway): string =>
    `${at.url}/db/${namespace.name}/${instance}${rest}`;

  beforeAll(async () => {
    engine = await startEngine();
    for (const [name, plan] of [
      ['paid', 'paid'],
      ['free', 'free'],
    ] as const) {
      const ref = { namespace: namespace.name, name };
      await createCouchInstance(kubeConfig, ref, { plan });
      await setInstancePod(kubeConfig, ref, { port: engine.port, ready: true });
    }
    gateway = await start();
  });

  afterAll(async () => {
    await gateway?.stop();
    await engine?.close();
  });

  it('when a Basic credential is not base64 (Basic %%%), then the gateway answers 401 itself and nothing reaches the engine', async () => {
    const before = await spliced(gateway);
    const good = await request(url('paid', '/doc'), { headers: { Authorization: basicAuth('a', 'b') } });
    expect(good.status).toBe(200);
    expect(await spliced(gateway)).toBe(before + 1);
    const seen = engine.seen.length;
    const bad = await request(url('paid', '/doc'), { headers: { Authorization: 'Basic %%%' } });
    expect(bad.status).toBe(401);
    expect(JSON.parse(bad.body)).toMatchObject({ error: 'unauthorized' });
    expect(engine.seen.slice(seen)).toEqual([]);
    expect(await spliced(gateway)).toBe(before + 1);
  });

  it('when a free instance creates a database, then the full path counts its databases first and refuses the one past the limit', async () => {
    const before = await spliced(gateway);
    const seen = engine.seen.length;
    const refused = await request(url('free', '/newdb'), { method: 'PUT' });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toMatchObject({ error: 'forbidden' });
    expect(engine.seen.slice(seen)).toEqual(['GET /_all_dbs']);
    expect(await spliced(gateway)).toBe(before);
    // A paid instance's create is no envelope's business: spliced.
    expect((await request(url('paid', '/newdb'), { method: 'PUT' })).status).toBe(201);
    expect(await spliced(gateway)).toBe(before + 1);
  });

  it('when the gateway drains, then a spliced exchange in flight ends whole, the next request on its connection gets Connection: close, and idle connections close at once', async () => {
    const draining = await start({ SETTEE_SHUTDOWN_TIMEOUT: '20s' });
    let stopped = false;
    try {
      const idle = new RawConnection(draining.port);
      idle.write(`GET /db/${namespace.name}/paid/idle HTTP/1.1\r\nHost: gw\r\n\r\n`);
      const busy = new RawConnection(draining.port);
      busy.write(
        `GET /db/${namespace.name}/paid/slow HTTP/1.1\r\nHost: gw\r\n\r\n` +
          `GET /db/${namespace.name}/paid/after HTTP/1.1\r\nHost: gw\r\n\r\n`,
      );
      const deadline = Date.now() + 10_000;
      const reached = (): boolean => ['GET /idle', 'GET /slow'].every((r) => engine.seen.includes(r));
      while (!reached() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(await spliced(draining)).toBe(2);
      const stopping = draining.stop().then(() => (stopped = true));
      const stoppedAt = Date.now();
      const [idleEnd, busyEnd] = await Promise.all([idle.finish(5_000), busy.finish(10_000)]);
      // The idle connection is closed by the drain's sweep, not by the 20 s grace.
      expect(idleEnd.closedByServer).toBe(true);
      expect(idleEnd.text).toMatch(/^HTTP\/1.1 200 OK\r\n[^]*"url":"\/idle"/);
      expect(busyEnd.closedByServer).toBe(true);
      const [first, second] = busyEnd.text.split(/(?=HTTP\/1.1 )/);
      expect(first).toMatch(/^HTTP\/1.1 200 OK\r\n[^]*\r\n\r\n\{"slow":true\}$/);
      expect(first).not.toMatch(/connection: close/i);
      // Declined while draining, it is the full path's: forwarded, answered whole, the connection closed.
      expect(second).toMatch(/^HTTP\/1.1 200 OK\r\n[^]*connection: close\r\n[^]*"url":"\/after"/i);
      expect(engine.seen).toContain('GET /after');
      await stopping;
      expect(Date.now() - stoppedAt).toBeLessThan(10_000);
    } finally {
      if (!stopped) await draining.stop();
    }
  });
});
