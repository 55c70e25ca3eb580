import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startCouchEngine, type CouchEngine } from '../../../local/couch-engine/index.js';
import { getFreePort } from '../../../local/ports.js';
import { waitFor } from '../../../local/wait.js';
import { EngineQueryError } from '../../../operator/controllers/couch-instance/engine-query.js';
import { countRunningReplications } from '../../../operator/controllers/couch-instance/running-replications.js';

const admin = { username: 'admin', password: 'running:replications@1' };
/** Generous for the real engine on a loaded machine; the timeout case uses its own short one. */
const TIMEOUT_MS = 10_000;
const SHORT_TIMEOUT_MS = 300;

/** A loopback HTTP server answering every request with `handler`, for the answers no CouchDB gives. */
async function startServer(
  handler: http.RequestListener,
): Promise<{ origin: string; close(): Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function queryError(promise: Promise<unknown>): Promise<EngineQueryError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EngineQueryError);
  return err as EngineQueryError;
}

/** The operator's question to an idle instance, against a real engine and servers that misbehave. */
describe('countRunningReplications', () => {
  let engine: CouchEngine;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-running-replications-'));
    engine = await startCouchEngine({ dataDir, admin });
  }, 30_000);

  afterAll(async () => {
    await engine?.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  const ask = (origin: string, credentials = admin) =>
    countRunningReplications({ origin, credentials, timeoutMs: TIMEOUT_MS });

  it('when the instance runs no replication, then the count is 0', async () => {
    expect(await ask(engine.url)).toBe(0);
  });

  it('when a continuous replication document is running on the instance, then the count is 1', async () => {
    const userinfo = `${encodeURIComponent(admin.username)}:${encodeURIComponent(admin.password)}`;
    const auth = `Basic ${Buffer.from(`${admin.username}:${admin.password}`).toString('base64')}`;
    const put = (url: string, body?: object) =>
      fetch(url, {
        method: 'PUT',
        headers: { Authorization: auth, 'Content-Type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    expect((await put(`${engine.url}/source`)).status).toBe(201);
    const created = await put(`${engine.url}/_replicator/live`, {
      source: `http://${userinfo}@127.0.0.1:${engine.port}/source`,
      target: `http://${userinfo}@127.0.0.1:${engine.port}/target`,
      create_target: true,
      continuous: true,
    });
    expect(created.status).toBe(201);
    // Apache CouchDB attaches its replicator 5 s after it starts and starts a job up to 5 s after its
    // document (cluster_start_period, startup_jitter).
    await waitFor('the job to run', async () => ((await ask(engine.url)) === 1 ? true : undefined), {
      timeoutMs: 45_000,
    });
  });

  // Real CouchDB lists pending jobs, and jobs backing off after a crash, with pid null.
  it('when the scheduler also holds a job that is not running (pid null), then only the running one counts', async () => {
    const couchLike = await startServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          total_rows: 2,
          offset: 0,
          jobs: [
            {
              id: 'a+continuous',
              pid: null,
              history: [{ type: 'crashed', timestamp: '2026-01-01T00:00:00Z' }],
            },
            {
              id: 'b+continuous',
              pid: '<0.1850.0>',
              history: [{ type: 'started', timestamp: '2026-01-01T00:00:00Z' }],
            },
          ],
        }),
      );
    });
    try {
      expect(await ask(couchLike.origin)).toBe(1);
    } finally {
      await couchLike.close();
    }
  });

  it('when the credentials are wrong, then it fails as Unauthorized without the password in the message', async () => {
    const err = await queryError(ask(engine.url, { username: admin.username, password: 'wrong-password' }));
    expect(err.code).toBe('Unauthorized');
    expect(err.message).not.toContain('wrong-password');
  });

  it('when nothing listens at the address, then it fails as Unreachable', async () => {
    const port = await getFreePort();
    expect((await queryError(ask(`http://127.0.0.1:${port}`))).code).toBe('Unreachable');
  });

  it('when the instance does not answer, then it fails as Timeout after the configured time', async () => {
    const silent = await startServer(() => undefined);
    try {
      const started = Date.now();
      const asked = countRunningReplications({
        origin: silent.origin,
        credentials: admin,
        timeoutMs: SHORT_TIMEOUT_MS,
      });
      expect((await queryError(asked)).code).toBe('Timeout');
      expect(Date.now() - started).toBeGreaterThanOrEqual(SHORT_TIMEOUT_MS - 5);
    } finally {
      await silent.close();
    }
  });

  it('when the answer has no jobs list, then it fails as BadResponse', async () => {
    const odd = await startServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ ok: true }));
    });
    try {
      expect((await queryError(ask(odd.origin))).code).toBe('BadResponse');
    } finally {
      await odd.close();
    }
  });
});
