import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  availableCouchEngineKinds,
  CouchEngineUnavailableError,
  startCouchEngine,
  type CouchEngine,
  type CouchEngineKind,
} from '../../../local/couch-engine/index.js';
import { STAND_IN_VENDOR_NAME } from '../../../local/couch-engine/stand-in-config.js';
import { getFreePort, isPortOpen } from '../../../local/ports.js';
import { isProcessAlive, ProcessExitedError } from '../../../local/process.js';

const admin = { username: 'admin', password: 'engine-test-password' };
const adminAuth = `Basic ${Buffer.from(`${admin.username}:${admin.password}`).toString('base64')}`;
const tempDirs: string[] = [];

async function newDataDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-engine-test-'));
  tempDirs.push(dir);
  return dir;
}

interface JsonResponse {
  status: number;
  body: Record<string, unknown>;
}

async function request(
  engine: CouchEngine,
  method: string,
  urlPath: string,
  options: { auth?: string; body?: object } = {},
): Promise<JsonResponse> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (options.auth) headers.Authorization = options.auth;
  if (options.body) headers['Content-Type'] = 'application/json';
  const response = await fetch(`${engine.url}${urlPath}`, {
    method,
    headers,
    body: options.body ? JSON.stringify(options.body) : undefined,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

afterAll(async () => {
  await Promise.all(tempDirs.map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

// Always the pouchdb-server stand-in; Apache CouchDB too when a release is available (make deps).
describe.each(availableCouchEngineKinds())('the %s engine', (kind: CouchEngineKind) => {
  describe('when running', () => {
    let engine: CouchEngine;

    beforeAll(async () => {
      engine = await startCouchEngine({ kind, dataDir: await newDataDir(), admin, uuid: 'settee-test-uuid' });
    });

    afterAll(async () => {
      await engine?.stop();
    });

    it('when started, then it reports its kind and a loopback url on its port', () => {
      expect(engine.kind).toBe(kind);
      expect(engine.url).toBe(`http://127.0.0.1:${engine.port}`);
    });

    it('when GET / is requested without credentials, then it is a CouchDB 3.x welcome with the given uuid', async () => {
      const { status, body } = await request(engine, 'GET', '/');
      expect(status).toBe(200);
      expect(body).toMatchObject({ couchdb: 'Welcome', uuid: 'settee-test-uuid' });
      expect(body.version).toMatch(/^3\.\d+\.\d+/);
      expect(body.features).toEqual(expect.arrayContaining(['partitioned', 'scheduler']));
      if (kind === 'pouchdb-server') expect(body.vendor).toEqual({ name: STAND_IN_VENDOR_NAME });
    });

    it('when GET /_up is requested, then the status is ok', async () => {
      const { status, body } = await request(engine, 'GET', '/_up');
      expect(status).toBe(200);
      expect(body.status).toBe('ok');
    });

    it('when a database is created or deleted without credentials, with or without a trailing slash, then it is refused with 401 and the engine stays up', async () => {
      const { status, body } = await request(engine, 'PUT', '/anonymous-db');
      expect(status).toBe(401);
      expect(body.error).toBe('unauthorized');
      expect((await request(engine, 'PUT', '/anonymous-db/')).status).toBe(401);
      expect((await request(engine, 'DELETE', '/_replicator/')).status).toBe(401);
      expect((await request(engine, 'GET', '/_up')).status).toBe(200);
    });

    it('when the databases are listed without credentials or with a wrong password, then 401', async () => {
      expect((await request(engine, 'GET', '/_all_dbs')).status).toBe(401);
      expect((await request(engine, 'GET', '/_all_dbs/')).status).toBe(401);
      const wrong = `Basic ${Buffer.from(`${admin.username}:not-the-password`).toString('base64')}`;
      expect((await request(engine, 'GET', '/_all_dbs', { auth: wrong })).status).toBe(401);
    });

    it('when the admin creates a database, then anonymous reads and writes in it are refused', async () => {
      expect((await request(engine, 'PUT', '/private', { auth: adminAuth })).status).toBe(201);
      expect((await request(engine, 'GET', '/private')).status).toBe(401);
      expect((await request(engine, 'PUT', '/private/doc', { body: { a: 1 } })).status).toBe(401);
      const { status, body } = await request(engine, 'GET', '/_all_dbs', { auth: adminAuth });
      expect(status).toBe(200);
      expect(body).toEqual(expect.arrayContaining(['private']));
    });

    // The stand-in writes a live change out with its next heartbeat; gzip would hold it until the feed ends.
    it('when a continuous _changes feed is read with gzip accepted, then a change arrives while the feed stays open', async () => {
      expect((await request(engine, 'PUT', '/feed', { auth: adminAuth })).status).toBe(201);
      const controller = new AbortController();
      const response = await fetch(`${engine.url}/feed/_changes?feed=continuous&since=now&heartbeat=500`, {
        headers: { authorization: adminAuth, 'accept-encoding': 'gzip' },
        signal: controller.signal,
      });
      try {
        const reader = (response.body as ReadableStream<Uint8Array>).getReader();
        await request(engine, 'PUT', '/feed/doc-1', { auth: adminAuth, body: { a: 1 } });
        let text = '';
        while (!text.includes('doc-1')) {
          const { value, done } = await reader.read();
          if (done) break;
          text += Buffer.from(value).toString('utf8');
        }
        expect(text).toContain('"id":"doc-1"');
      } finally {
        controller.abort();
      }
    });

    it('when the configuration is written and read through /_node/_local/_config, then it holds the value, and only for the admin', async () => {
      const setting = '/_node/_local/_config/settee/probe';
      const put = await fetch(`${engine.url}${setting}`, {
        method: 'PUT',
        headers: { authorization: adminAuth, 'content-type': 'application/json' },
        body: JSON.stringify('on'),
      });
      expect(put.status).toBe(200);
      await put.body?.cancel();
      const read = await fetch(`${engine.url}${setting}`, { headers: { authorization: adminAuth } });
      expect(await read.json()).toBe('on');
      const section = await request(engine, 'GET', '/_node/_local/_config/settee', { auth: adminAuth });
      expect(section).toEqual({ status: 200, body: { probe: 'on' } });
      // The node's own name, as /_membership gives it (what Fauxton's Config page uses), serves the same.
      const { body: membership } = await request(engine, 'GET', '/_membership', { auth: adminAuth });
      const node = (membership.all_nodes as string[])[0] ?? '';
      const byName = await request(engine, 'GET', `/_node/${node}/_config/settee`, { auth: adminAuth });
      expect(byName).toEqual({ status: 200, body: { probe: 'on' } });
      // The configuration holds the admin's password hash and the cookie secret.
      for (const path of [
        '/_node/_local/_config',
        `/_node/${node}/_config`,
        `/_node/${node}/_config/admins`,
      ]) {
        expect({ path, status: (await request(engine, 'GET', path)).status }).toEqual({ path, status: 401 });
      }
    });

    it('when the admin logs in through /_session, then the session is the admin', async () => {
      const { status, body } = await request(engine, 'POST', '/_session', {
        body: { name: admin.username, password: admin.password },
      });
      expect(status).toBe(200);
      expect(body).toMatchObject({
        ok: true,
        name: admin.username,
        roles: expect.arrayContaining(['_admin']),
      });
    });
  });

  it('when stopped and started again on the same dataDir, then the documents and the uuid are still there', async () => {
    const dataDir = await newDataDir();
    const first = await startCouchEngine({ kind, dataDir, admin, name: 'restart-1' });
    try {
      expect((await request(first, 'PUT', '/kept', { auth: adminAuth })).status).toBe(201);
      const put = await request(first, 'PUT', '/kept/doc-1', { auth: adminAuth, body: { hello: 'world' } });
      expect(put.status).toBe(201);
    } finally {
      await first.stop();
    }
    const second = await startCouchEngine({ kind, dataDir, admin, name: 'restart-2' });
    try {
      expect(second.uuid).toBe(first.uuid);
      expect((await request(second, 'GET', '/')).body.uuid).toBe(first.uuid);
      const { status, body } = await request(second, 'GET', '/kept/doc-1', { auth: adminAuth });
      expect(status).toBe(200);
      expect(body).toMatchObject({ _id: 'doc-1', hello: 'world' });
    } finally {
      await second.stop();
    }
  });

  it('when stopped, then its process is gone and its port closed, and a second stop is harmless', async () => {
    const engine = await startCouchEngine({ kind, dataDir: await newDataDir(), admin });
    expect(isProcessAlive(engine.pid)).toBe(true);
    await engine.stop();
    expect(isProcessAlive(engine.pid)).toBe(false);
    expect(await isPortOpen(engine.port)).toBe(false);
    await expect(engine.stop()).resolves.toBeUndefined();
  });

  it('when started with onStarted, then it is told the pid once, at the spawn, before the engine listens', async () => {
    const port = await getFreePort();
    const told: number[] = [];
    let listeningWhenTold: Promise<boolean> | undefined;
    const engine = await startCouchEngine({
      kind,
      dataDir: await newDataDir(),
      admin,
      port,
      onStarted: (pid) => {
        told.push(pid);
        listeningWhenTold = isPortOpen(port);
      },
    });
    try {
      expect(told).toEqual([engine.pid]);
      expect(await listeningWhenTold).toBe(false);
    } finally {
      await engine.stop();
    }
  });

  it('when a fixed port is already taken, then starting fails fast with the engine output saying so', async () => {
    const blocker = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      const attempt = startCouchEngine({ kind, dataDir: await newDataDir(), admin, port });
      await expect(attempt).rejects.toBeInstanceOf(ProcessExitedError);
      await expect(attempt).rejects.toThrow(/EADDRINUSE|eaddrinuse/);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('when two engines run side by side, then each answers on its own port with its own data', async () => {
    const [a, b] = await Promise.all([
      startCouchEngine({ kind, dataDir: await newDataDir(), admin, name: 'side-a' }),
      startCouchEngine({ kind, dataDir: await newDataDir(), admin, name: 'side-b' }),
    ]);
    try {
      expect(a.port).not.toBe(b.port);
      expect(a.uuid).not.toBe(b.uuid);
      expect((await request(a, 'PUT', '/only-in-a', { auth: adminAuth })).status).toBe(201);
      expect((await request(b, 'GET', '/only-in-a', { auth: adminAuth })).status).toBe(404);
      expect((await request(b, 'GET', '/')).body.uuid).toBe(b.uuid);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});

describe('the apache-couchdb engine without a usable release', () => {
  it('when SETTEE_COUCHDB_RELEASE is none, then starting it fails with CouchEngineUnavailableError', async () => {
    const env = { SETTEE_COUCHDB_RELEASE: 'none' };
    const attempt = startCouchEngine({ kind: 'apache-couchdb', env, dataDir: await newDataDir(), admin });
    await expect(attempt).rejects.toBeInstanceOf(CouchEngineUnavailableError);
    await expect(attempt).rejects.toThrow(/SETTEE_COUCHDB_RELEASE/);
  });

  it('when SETTEE_COUCHDB_RELEASE names nothing there, then starting it fails with CouchEngineUnavailableError', async () => {
    const env = { SETTEE_COUCHDB_RELEASE: '/nonexistent/couchdb-3.5.2' };
    const attempt = startCouchEngine({ kind: 'apache-couchdb', env, dataDir: await newDataDir(), admin });
    await expect(attempt).rejects.toBeInstanceOf(CouchEngineUnavailableError);
  });

  it('when SETTEE_COUCHDB_RELEASE is a folder without a release, then the error says what it lacks', async () => {
    const root = await newDataDir();
    await fs.mkdir(path.join(root, 'bin'));
    await fs.writeFile(path.join(root, 'bin', 'couchdb'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    const env = { SETTEE_COUCHDB_RELEASE: root };
    const attempt = startCouchEngine({ kind: 'apache-couchdb', env, dataDir: root, admin });
    await expect(attempt).rejects.toBeInstanceOf(CouchEngineUnavailableError);
  });
});
