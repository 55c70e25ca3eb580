import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type nano from 'nano';
import { startCouchEngine, type CouchEngine } from '../../../local/couch-engine/index.js';
import type { Gateway } from '../../../gateway/gateway.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import {
  createCouchInstance,
  instanceUrl,
  nanoAt,
  setInstancePod,
  startTestGateway,
} from '../../helpers/gateway/gateway-harness.js';
import { basicAuth, request } from '../../helpers/gateway/http-request.js';

/**
 * The whole CouchDB API through the gateway to a real engine process, in the path form. No
 * operator here: the test creates the CouchInstance and the pod with the engine's address itself,
 * as the operator and the kubelet would.
 */
describe('the gateway passes the CouchDB API through', () => {
  const namespace = useTestNamespace('gw-pass');
  const admin = { username: 'admin', password: 'p@ss:word/1' };
  let dataDir: string;
  let engine: CouchEngine;
  let gateway: Gateway;
  let base: string;
  let couch: nano.ServerScope;

  beforeAll(async () => {
    const { kubeConfig } = testControlPlane();
    const ref = { namespace: namespace.name, name: 'pass' };
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-gw-pass-'));
    [engine] = await Promise.all([
      startCouchEngine({ dataDir, admin }),
      createCouchInstance(kubeConfig, ref),
    ]);
    await setInstancePod(kubeConfig, ref, { port: engine.port, ready: true });
    gateway = await startTestGateway({ kubeConfig, namespace: namespace.name });
    base = instanceUrl(gateway, ref);
    couch = nanoAt(instanceUrl(gateway, ref, admin));
    await waitForRoute(base);
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await engine?.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('when GET / is sent with credentials in the URL userinfo, then the welcome document comes back', async () => {
    const welcome = (await couch.relax({ path: '' })) as { couchdb: string; version: string };
    expect(welcome.couchdb).toBe('Welcome');
    expect(welcome.version).toMatch(/^3\.\d+\.\d+$/);
  });

  it('when a document is created, read, updated, copied and deleted, then each step answers as CouchDB does', async () => {
    await couch.db.create('crud');
    const db = couch.use<{ n: number }>('crud');
    const created = await db.insert({ n: 1 }, 'doc1');
    expect(created.ok).toBe(true);
    expect((await db.get('doc1')).n).toBe(1);
    const updated = await db.insert({ n: 2, _rev: created.rev } as { n: number; _rev: string }, 'doc1');
    expect(updated.rev).toMatch(/^2-/);

    const copied = await request(`${base}/crud/doc1`, {
      method: 'COPY',
      headers: { Authorization: basicAuth(admin.username, admin.password), Destination: 'doc2' },
    });
    expect(copied.status).toBe(201);
    expect((await db.get('doc2')).n).toBe(2);

    await db.destroy('doc1', updated.rev);
    await expect(db.get('doc1')).rejects.toMatchObject({ statusCode: 404 });
  });

  it('when _bulk_docs writes many documents, then all are stored', async () => {
    await couch.db.create('bulk');
    const db = couch.use<{ i: number }>('bulk');
    const docs = Array.from({ length: 500 }, (_, i) => ({ _id: `d${String(i).padStart(3, '0')}`, i }));
    const results = await db.bulk({ docs });
    expect(results.filter((r) => r.rev !== undefined && r.error === undefined)).toHaveLength(500);
    const all = await db.list({ include_docs: true });
    expect(all.rows.map((r) => r.doc?.i).sort((a = 0, b = 0) => a - b)).toEqual(docs.map((d) => d.i));
  });

  it('when a Mango index is created and queried, then _find uses it and returns the matches', async () => {
    await couch.db.create('mango');
    const db = couch.use<{ city: string; age: number }>('mango');
    await db.bulk({
      docs: [
        { city: 'Oslo', age: 30 },
        { city: 'Rome', age: 41 },
        { city: 'Oslo', age: 52 },
      ],
    });
    const index = await db.createIndex({ index: { fields: ['city'] }, ddoc: 'by-city', name: 'by-city' });
    expect(['created', 'exists']).toContain(index.result);
    const found = await db.find({
      selector: { city: 'Oslo' },
      use_index: ['by-city', 'by-city'],
      fields: ['age'],
    });
    expect(found.docs.map((d) => d.age).sort()).toEqual([30, 52]);
  });

  it('when a design document defines a MapReduce view, then querying it returns the reduced result', async () => {
    await couch.db.create('views');
    const db = couch.use<{ type: string; price: number }>('views');
    await db.bulk({
      docs: [
        { type: 'a', price: 2 },
        { type: 'b', price: 5 },
        { type: 'a', price: 7 },
      ],
    });
    await db.insert(
      {
        views: { byType: { map: 'function (doc) { emit(doc.type, doc.price); }', reduce: '_sum' } },
      } as never,
      '_design/shop',
    );
    const grouped = await db.view('shop', 'byType', { group: true });
    expect(grouped.rows).toEqual([
      { key: 'a', value: 9 },
      { key: 'b', value: 5 },
    ]);
  });

  it('when a binary attachment is stored and read back, then every byte is the same', async () => {
    await couch.db.create('files');
    const db = couch.use('files');
    const bytes = crypto.randomBytes(256 * 1024);
    const doc = await db.insert({}, 'withfile');
    await db.attachment.insert('withfile', 'blob.bin', bytes, 'application/octet-stream', { rev: doc.rev });
    const back = await db.attachment.get('withfile', 'blob.bin');
    expect(Buffer.compare(back, bytes)).toBe(0);
  });

  it('when a 100 MB attachment is streamed up and down, then it round-trips intact without the gateway buffering it', async () => {
    const auth = basicAuth(admin.username, admin.password);
    await couch.db.create('big');
    const doc = await couch.use('big').insert({}, 'large');
    const size = 100 * 1024 * 1024;
    const sent = crypto.createHash('sha256');
    const rssBefore = process.memoryUsage().rss;
    let peakRss = rssBefore;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
    try {
      const put = await streamRequest(`${base}/big/large/data.bin?rev=${doc.rev}`, {
        method: 'PUT',
        headers: { Authorization: auth, 'Content-Type': 'application/octet-stream', 'Content-Length': size },
        body: pseudoRandomStream(size, sent),
      });
      expect(put.status).toBe(201);
      const received = crypto.createHash('sha256');
      let bytes = 0;
      const got = await streamRequest(
        `${base}/big/large/data.bin`,
        { headers: { Authorization: auth } },
        (chunk) => {
          bytes += chunk.length;
          received.update(chunk);
        },
      );
      expect(got.status).toBe(200);
      expect(bytes).toBe(size);
      expect(received.digest('hex')).toBe(sent.digest('hex'));
    } finally {
      clearInterval(sampler);
    }
    // The payload went through this process twice (client, gateway and back); holding it in either
    // direction would cost at least one whole copy. Less than that proves streaming, with room for
    // the sockets' buffers and the garbage collector's timing in a shared test worker.
    expect(peakRss - rssBefore).toBeLessThan(size);
  }, 180_000);

  it('when a continuous _changes feed is open, then each change arrives while the response stays open', async () => {
    await couch.db.create('feed');
    const db = couch.use('feed');
    const lines: string[] = [];
    const controller = new AbortController();
    const response = await fetch(`${base}/feed/_changes?feed=continuous&heartbeat=500&since=now`, {
      // The pouchdb-server stand-in gzips responses when asked, and gzip holds a feed back until it
      // ends (CouchDB does not compress _changes); identity keeps the test about the gateway.
      headers: { Authorization: basicAuth(admin.username, admin.password), 'Accept-Encoding': 'identity' },
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    const readLines = (async () => {
      let partial = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        const parts = (partial + value).split('\n');
        partial = parts.pop() ?? '';
        lines.push(...parts.filter((line) => line.trim() !== ''));
      }
    })().catch(() => undefined);
    for (const id of ['c1', 'c2', 'c3']) {
      await db.insert({}, id);
      await waitUntil(() => lines.some((line) => line.includes(`"${id}"`)));
    }
    controller.abort();
    await readLines;
    expect(lines.map((line) => (JSON.parse(line) as { id: string }).id)).toEqual(['c1', 'c2', 'c3']);
  });

  it('when a longpoll _changes request waits, then it is answered as soon as a change happens', async () => {
    await couch.db.create('poll');
    // From the sequence before the change, not since=now: a request that reaches CouchDB after the
    // insert (a loaded machine) still gets it, where since=now would wait out its timeout for nothing.
    const { update_seq: since } = await couch.db.get('poll');
    // The heartbeat makes a waiting longpoll send empty lines: the test sees it held open, unanswered.
    const response = await fetch(
      `${base}/poll/_changes?feed=longpoll&since=${String(since)}&heartbeat=200&timeout=60000`,
      {
        headers: { Authorization: basicAuth(admin.username, admin.password), 'Accept-Encoding': 'identity' },
      },
    );
    expect(response.status).toBe(200);
    let body = '';
    let answered = false;
    const reading = (async () => {
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) body += chunk.value;
      answered = true;
    })();
    // An empty line after the opening of the results: the engine holds the request, with nothing to send.
    await waitUntil(() => answered || body.endsWith('\n\n'), 30_000);
    expect(answered).toBe(false);
    expect(body).not.toContain('last_seq');
    await couch.use('poll').insert({}, 'late');
    await reading;
    expect((JSON.parse(body) as { results: Array<{ id: string }> }).results.map((r) => r.id)).toEqual([
      'late',
    ]);
  });

  it('when a session is opened through the path form, then its cookie is scoped to the instance and authenticates', async () => {
    const login = await request(`${base}/_session`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: admin.username, password: admin.password }),
    });
    expect(login.status).toBe(200);
    const cookie = String(login.headers['set-cookie']?.[0] ?? '');
    expect(cookie).toMatch(new RegExp(`Path=/db/${namespace.name}/pass(;|$)`));
    const session = await request(`${base}/_session`, { headers: { Cookie: cookie.split(';')[0] ?? '' } });
    expect(JSON.parse(session.body)).toMatchObject({ userCtx: { name: admin.username } });
  });

  it('when Fauxton is opened at /_utils, then the redirect stays under the instance prefix and the page loads', async () => {
    const redirect = await request(`${base}/_utils`);
    expect(redirect.status).toBe(301);
    // Apache CouchDB redirects to an absolute URL (its own), which the gateway rewrites to its own.
    const location = new URL(String(redirect.headers.location), gateway.url);
    expect(location.href).toBe(`${gateway.url}/db/${namespace.name}/pass/_utils/`);
    const page = await request(location.href);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
  });

  it('when the instance is asked for a database it lacks, then CouchDB itself answers 404', async () => {
    const missing = await request(`${base}/nothing-here`, {
      headers: { Authorization: basicAuth(admin.username, admin.password) },
    });
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toMatchObject({ error: 'not_found' });
  });
});

/** Once the gateway's informers have the instance and its pod (a watch round trip) and the engine answers. */
async function waitForRoute(base: string): Promise<void> {
  await waitUntil(async () => (await request(`${base}/_up`)).status === 200, 30_000);
}

async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** `size` bytes that are cheap to make and hard to mistake (a random block with a counter in each chunk). */
function pseudoRandomStream(size: number, hash: crypto.Hash): Readable {
  const block = crypto.randomBytes(64 * 1024);
  let sent = 0;
  let counter = 0;
  return new Readable({
    read() {
      if (sent >= size) {
        this.push(null);
        return;
      }
      const chunk = Buffer.from(block.subarray(0, Math.min(block.length, size - sent)));
      chunk.writeUInt32BE(counter++, 0);
      sent += chunk.length;
      hash.update(chunk);
      this.push(chunk);
    },
  });
}

function streamRequest(
  url: string,
  options: { method?: string; headers?: http.OutgoingHttpHeaders; body?: Readable },
  onChunk?: (chunk: Buffer) => void,
): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: options.method ?? 'GET', headers: options.headers, agent: false },
      (res) => {
        res.on('data', (chunk: Buffer) => onChunk?.(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (options.body) pipeline(options.body, req).catch(reject);
    else req.end();
  });
}
