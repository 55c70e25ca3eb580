import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { SETTEE_GROUP, SETTEE_VERSION } from '../../../api/contract.js';
import { COUCH_INSTANCE_PLURAL, type CouchInstanceSpec } from '../../../api/couch-instance.js';
import type { Gateway } from '../../../gateway/gateway.js';
import { startCouchEngine, type CouchEngine } from '../../../local/couch-engine/index.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import {
  createCouchInstance,
  replaceCouchInstanceStatus,
  setInstancePod,
  startTestGateway,
} from '../../helpers/gateway/gateway-harness.js';
import { basicAuth, request, type PlainResponse } from '../../helpers/gateway/http-request.js';

/**
 * The free envelope at the real gateway in front of a real engine: rates, storage and database
 * count. No operator: the test writes status.usage as the operator's measurement would.
 */
describe('the gateway enforces the free envelope on free instances', () => {
  const namespace = useTestNamespace('gw-envelope');
  const admin = { username: 'admin', password: 'envelope' };
  const auth = basicAuth(admin.username, admin.password);
  let dataDir: string;
  let engine: CouchEngine;
  let gateway: Gateway;

  const { kubeConfig } = testControlPlane();
  const url = (instance: string, rest: string): string =>
    `${gateway.url}/db/${namespace.name}/${instance}${rest}`;
  const call = (
    instance: string,
    method: string,
    rest: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<PlainResponse> =>
    request(url(instance, rest), {
      method,
      headers: { Authorization: auth, 'Content-Type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  async function instanceOnEngine(name: string, spec: CouchInstanceSpec = {}, ready = true): Promise<void> {
    const ref = { namespace: namespace.name, name };
    await createCouchInstance(kubeConfig, ref, spec);
    await setInstancePod(kubeConfig, ref, { port: engine.port, ready });
    await waitFor(async () => (await call(name, 'GET', '/_up')).status !== 404);
  }

  async function setPlan(name: string, plan: 'free' | 'paid'): Promise<void> {
    await kubeConfig.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject(
      {
        group: SETTEE_GROUP,
        version: SETTEE_VERSION,
        plural: COUCH_INSTANCE_PLURAL,
        namespace: namespace.name,
        name,
        body: { spec: { plan } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  /**
   * Sends `perSecond` requests a second for `seconds`, each started on its own schedule (an open
   * loop, so a slow answer does not slow the offered rate), and returns every answer.
   */
  async function offer(perSecond: number, seconds: number, send: () => Promise<PlainResponse>) {
    const answers: Array<Promise<PlainResponse>> = [];
    const start = Date.now();
    for (let i = 0; i < perSecond * seconds; i++) {
      const due = start + (i * 1000) / perSecond;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
      answers.push(send());
    }
    return Promise.all(answers);
  }

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-gw-envelope-'));
    engine = await startCouchEngine({ dataDir, admin });
    gateway = await startTestGateway({
      kubeConfig,
      namespace: namespace.name,
      env: {
        SETTEE_GATEWAY_FREE_READS_PER_SECOND: '20',
        SETTEE_GATEWAY_FREE_WRITES_PER_SECOND: '10',
        SETTEE_GATEWAY_FREE_QUERIES_PER_SECOND: '5',
        SETTEE_GATEWAY_FREE_STORAGE: '64Ki',
        SETTEE_GATEWAY_FREE_DATABASES: '3',
        // Held requests must outlast the pod's address reaching this gateway and the first probe,
        // which a loaded machine can stretch past 2 s.
        SETTEE_GATEWAY_WAKE_TIMEOUT: '5s',
      },
    });
    await instanceOnEngine('rates');
    const seeded = await call('rates', 'PUT', '/rates');
    expect([201, 412]).toContain(seeded.status);
    await call('rates', 'PUT', '/rates/doc', { n: 1 });
  });

  afterAll(async () => {
    await gateway?.stop();
    await engine?.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('when queries come at half the rate, then none is refused; at four times it, then the excess gets 429 with Retry-After', async () => {
    const query = () => call('rates', 'POST', '/rates/_find', { selector: { n: 1 } });
    const below = await offer(2.5, 2, query);
    expect(below.map((answer) => answer.status)).toEqual(below.map(() => 200));

    await new Promise((resolve) => setTimeout(resolve, 1_000)); // the bucket refills
    const started = Date.now();
    const above = await offer(20, 2, query);
    const seconds = (Date.now() - started) / 1000;
    const passed = above.filter((answer) => answer.status === 200).length;
    const refused = above.filter((answer) => answer.status === 429);
    // A burst of 5, then 5 a second for as long as the loop took (2 s, more on a loaded machine):
    // about 15 of 40, and never more than the rate allows over the time it ran.
    expect(passed).toBeGreaterThanOrEqual(10);
    expect(passed).toBeLessThanOrEqual(Math.min(40, 5 + Math.ceil(5 * seconds) + 1));
    expect(refused.length).toBeGreaterThan(0);
    expect(passed + refused.length).toBe(40);
    const sample = refused[0]!;
    expect(Number(sample.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(sample.body)).toEqual({
      error: 'too_many_requests',
      reason: expect.stringContaining('limited to 5 query requests per second') as unknown,
    });
  });

  it('when writes exceed their rate, then reads of the same instance still pass', async () => {
    const writes = await Promise.all(
      Array.from({ length: 25 }, (_, i) => call('rates', 'PUT', `/rates/burst-${i}`, { i })),
    );
    expect(writes.filter((answer) => answer.status === 429).length).toBeGreaterThan(0);
    expect((await call('rates', 'GET', '/rates/doc')).status).toBe(200);
  });

  it('when a paid instance is sent far more than the free rates, then nothing is refused', async () => {
    await instanceOnEngine('paid', { plan: 'paid' });
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => call('paid', 'POST', '/rates/_find', { selector: {} })),
    );
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
  });

  it('when a limited free instance moves to plan: paid, then its next requests pass without a restart', async () => {
    await instanceOnEngine('upgrade');
    const query = () => call('upgrade', 'POST', '/rates/_find', { selector: {} });
    const burst = await Promise.all(Array.from({ length: 10 }, query));
    expect(burst.some((answer) => answer.status === 429)).toBe(true);
    await setPlan('upgrade', 'paid');
    // Waits for the gateway's cache to see the change; then a burst passes whole.
    await waitFor(async () => (await query()).status === 200 && (await query()).status === 200);
    const after = await Promise.all(Array.from({ length: 20 }, query));
    expect(after.map((answer) => answer.status)).toEqual(after.map(() => 200));
  });

  it('when requests are held while their instance wakes, then none is refused for the rate', async () => {
    await createCouchInstance(kubeConfig, { namespace: namespace.name, name: 'waking' });
    await setInstancePod(kubeConfig, { namespace: namespace.name, name: 'waking' }, undefined);
    // Known to the gateway once a request is held (503 at the wake timeout) rather than 404.
    await waitFor(async () => (await call('waking', 'GET', '/_up')).status !== 404);
    // 30 writes at once against a rate of 10, all arriving before the instance has an address.
    const held = Array.from({ length: 30 }, (_, i) => call('waking', 'PUT', `/rates/held-${i}`, { i }));
    // All 30 are past the envelope and held (the meter counts them there) before the instance has an
    // address, however long a loaded machine takes to bring them to the gateway.
    await waitFor(async () => {
      const metrics = (await request(`${gateway.url}/metrics`)).body;
      const writes =
        /^settee_gateway_instance_requests_total\{[^}]*instance="waking"[^}]*class="write"[^}]*\} (\d+)$/m.exec(
          metrics,
        );
      return Number(writes?.[1] ?? 0) >= 30;
    });
    await setInstancePod(
      kubeConfig,
      { namespace: namespace.name, name: 'waking' },
      { port: engine.port, ready: true },
    );
    const answers = await Promise.all(held);
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 201));
    expect(answers.every((answer) => answer.headers['x-settee-cold-start'] !== undefined)).toBe(true);
  });

  it('when a free instance holds more than the storage limit, then writes get 402 while reads, deletes and compaction work, until it is under again', async () => {
    const ref = { namespace: namespace.name, name: 'full' };
    await instanceOnEngine('full');
    expect((await call('full', 'PUT', '/full')).status).toBe(201);
    const doc = JSON.parse((await call('full', 'PUT', '/full/doc', { n: 1 })).body) as { rev: string };
    const other = JSON.parse((await call('full', 'PUT', '/full/other', { n: 2 })).body) as { rev: string };
    // What the operator writes once it measured 128 KiB against the 64 KiB limit.
    await replaceCouchInstanceStatus(kubeConfig, ref, { usage: { storageBytes: 131_072, databases: 1 } });
    await waitFor(async () => (await call('full', 'PUT', '/full/new', { n: 3 })).status === 402);

    const refused = await call('full', 'POST', '/full/_bulk_docs', { docs: [{ n: 4 }] });
    expect(refused.status).toBe(402);
    expect(JSON.parse(refused.body)).toEqual({
      error: 'over_data_quota',
      reason: expect.stringContaining('storage limit of 64Ki') as unknown,
    });
    expect((await call('full', 'PUT', '/another-db')).status).toBe(402);
    expect((await call('full', 'GET', '/full/doc')).status).toBe(200);
    expect((await call('full', 'POST', '/full/_find', { selector: {} })).status).toBe(200);
    expect((await call('full', 'DELETE', `/full/doc?rev=${doc.rev}`)).status).toBe(200);
    expect((await call('full', 'POST', '/full/_compact', {})).status).toBe(202);
    // A _bulk_docs of tombstones only is a delete (PouchDB and replication send deletions so);
    // one that also carries a body, or a tombstone with data, still adds data.
    const mixed = await call('full', 'POST', '/full/_bulk_docs', {
      docs: [
        { _id: 'other', _rev: other.rev, _deleted: true },
        { _id: 'extra', n: 6 },
      ],
    });
    expect(mixed.status).toBe(402);
    const heavyTombstone = await call('full', 'POST', '/full/_bulk_docs', {
      docs: [{ _id: 'other', _rev: other.rev, _deleted: true, payload: 'x'.repeat(100) }],
    });
    expect(heavyTombstone.status).toBe(402);
    const deletions = await call('full', 'POST', '/full/_bulk_docs', {
      docs: [{ _id: 'other', _rev: other.rev, _deleted: true }],
    });
    expect(deletions.status).toBe(201);
    expect(JSON.parse(deletions.body)).toEqual([
      { ok: true, id: 'other', rev: expect.any(String) as unknown },
    ]);
    expect((await call('full', 'GET', '/full/other')).status).toBe(404);

    // Measured again under the limit: writes are accepted.
    await replaceCouchInstanceStatus(kubeConfig, ref, { usage: { storageBytes: 1_024, databases: 1 } });
    await waitFor(async () => (await call('full', 'PUT', '/full/again', { n: 5 })).status === 201);
  });

  it('when a free instance has as many databases as the limit, then creating one more is refused until one is deleted', async () => {
    await instanceOnEngine('count', {}, true);
    // The engine is shared: count what it has now and fill up to the limit of 3.
    const existing = (JSON.parse((await call('count', 'GET', '/_all_dbs')).body) as string[]).filter(
      (name) => !name.startsWith('_'),
    );
    const created: string[] = [];
    for (let i = 0; existing.length + created.length < 3; i++) {
      const answer = await call('count', 'PUT', `/count-${i}`);
      expect(answer.status).toBe(201);
      created.push(`count-${i}`);
    }
    const refused = await call('count', 'PUT', '/count-extra');
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toEqual({
      error: 'forbidden',
      reason: expect.stringContaining('limited to 3 databases') as unknown,
    });
    // The same create on a paid instance of the same engine goes through.
    await instanceOnEngine('count-paid', { plan: 'paid' });
    expect((await call('count-paid', 'PUT', '/count-extra')).status).toBe(201);
    expect((await call('count-paid', 'DELETE', '/count-extra')).status).toBe(200);
    // After a delete the free instance may create one again.
    const victim = created[0] ?? existing.find((name) => name !== 'rates') ?? 'rates';
    expect((await call('count', 'DELETE', `/${victim}`)).status).toBe(200);
    expect((await call('count', 'PUT', '/count-extra')).status).toBe(201);
  });

  it('when creates race for the last places under the database limit, then exactly as many pass as there is room for', async () => {
    await instanceOnEngine('racing', {}, true);
    const listDatabases = async () =>
      (JSON.parse((await call('racing', 'GET', '/_all_dbs')).body) as string[]).filter(
        (name) => !name.startsWith('_'),
      );
    // Make room for exactly two more (the engine is shared with the other cases; limit 3).
    let existing = await listDatabases();
    for (let i = 0; existing.length < 1; i++) await call('racing', 'PUT', `/racing-seed-${i}`);
    existing = await listDatabases();
    for (const name of existing.slice(1))
      expect((await call('racing', 'DELETE', `/${name}`)).status).toBe(200);
    expect(await listDatabases()).toHaveLength(1);

    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => call('racing', 'PUT', `/racing-${i}`)),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([201, 201, 403, 403, 403, 403]);
    expect(await listDatabases()).toHaveLength(3);
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
