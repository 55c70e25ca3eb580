import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { V1Pod } from '@kubernetes/client-node';
import { UsageMeter } from '../../../operator/controllers/couch-instance/usage-meter.js';
import { createSilentLogger } from '../../../observability/logger.js';

/** A CouchDB-shaped server on loopback whose answers the test sets. */
async function startServer(
  answer: (req: http.IncomingMessage) => { status: number; body: unknown },
): Promise<{ port: number; requests: string[]; close: () => Promise<void> }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
    const { status, body } = answer(req);
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const podOn = (port: number): V1Pod => ({
  metadata: { name: 'quota-0' },
  spec: { containers: [{ name: 'couchdb', ports: [{ containerPort: port }] }] },
  status: { phase: 'Running', podIP: '127.0.0.1', conditions: [{ type: 'Ready', status: 'True' }] },
});

describe('UsageMeter against a CouchDB-shaped server', () => {
  const credentials = { username: 'admin', password: 'secret' };
  let now = Date.parse('2026-01-01T12:00:00.000Z');
  const meter = new UsageMeter({ intervalMs: 60_000, timeoutMs: 2_000, now: () => new Date(now) });
  const check = (port: number, extra: { running?: boolean; previous?: { measuredAt: string } } = {}) =>
    meter.read({
      key: `ns/${port}`,
      running: extra.running ?? true,
      pod: podOn(port),
      credentials,
      previous: extra.previous,
      logger: createSilentLogger(),
      signal: new AbortController().signal,
    });

  it('when the instance answers, then the file sizes of every database are summed and CouchDB’s own are not counted as databases', async () => {
    const server = await startServer((req) => {
      if (req.url === '/_all_dbs') return { status: 200, body: ['_users', 'orders', 'a/b'] };
      if (req.url === '/_users') return { status: 200, body: { sizes: { file: 100, active: 10 } } };
      if (req.url === '/orders') return { status: 200, body: { sizes: { file: 2_000 } } };
      if (req.url === '/a%2Fb') return { status: 200, body: { disk_size: 30 } };
      return { status: 404, body: { error: 'not_found' } };
    });
    try {
      const reading = await check(server.port);
      expect(reading).toEqual({
        result: 'measured',
        usage: { storageBytes: 2_130, databases: 2, measuredAt: '2026-01-01T12:00:00.000Z' },
      });
      // No /_dbs_info here (CouchDB before 3.2 answers 404): each database is asked on its own.
      const auth = `Basic ${Buffer.from('admin:secret').toString('base64')}`;
      expect(server.requests.slice(0, 2)).toEqual([`GET /_dbs_info ${auth}`, `GET /_all_dbs ${auth}`]);
      // Within the interval nothing more is asked.
      now += 30_000;
      expect(await check(server.port)).toEqual({ result: 'unchanged' });
      expect(server.requests).toHaveLength(5);
      now += 30_000;
      expect((await check(server.port)).result).toBe('measured');
    } finally {
      await server.close();
    }
  });

  it('when the instance answers GET /_dbs_info (CouchDB 3.2 and later), then one request measures every database', async () => {
    const server = await startServer((req) =>
      req.url === '/_dbs_info'
        ? {
            status: 200,
            body: [
              { key: '_replicator', info: { sizes: { file: 10 } } },
              { key: 'orders', info: { sizes: { file: 5_000, active: 100 } } },
            ],
          }
        : { status: 500, body: { error: 'unexpected' } },
    );
    try {
      expect(await check(server.port)).toMatchObject({
        result: 'measured',
        usage: { storageBytes: 5_010, databases: 1 },
      });
      expect(server.requests).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('when the instance fails to answer, then the reading says why, and it is not asked again within the interval', async () => {
    const server = await startServer(() => ({ status: 500, body: { error: 'internal' } }));
    try {
      const reading = await check(server.port);
      expect(reading).toMatchObject({
        result: 'failed',
        error: expect.stringContaining('answered 500') as unknown,
      });
      expect(JSON.stringify(reading)).not.toContain('secret');
      expect(await check(server.port)).toEqual({ result: 'unchanged' });
      expect(server.requests).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('when the instance is not running, or status says it was measured within the interval, then nothing is asked', async () => {
    const server = await startServer(() => ({ status: 200, body: [] }));
    try {
      expect(await check(server.port, { running: false })).toEqual({ result: 'unchanged' });
      const recent = new Date(now - 10_000).toISOString();
      expect(await check(server.port, { previous: { measuredAt: recent } })).toEqual({ result: 'unchanged' });
      expect(server.requests).toHaveLength(0);
    } finally {
      await server.close();
    }
  });
});
