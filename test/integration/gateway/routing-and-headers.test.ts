import fs from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { SETTEE_GROUP, SETTEE_VERSION } from '../../../api/contract.js';
import { COUCH_INSTANCE_PLURAL } from '../../../api/couch-instance.js';
import type { Gateway } from '../../../gateway/gateway.js';
import { generateControlPlanePki } from '../../../local/pki.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import {
  startEchoUpstream,
  type EchoUpstream,
  type EchoedRequest,
} from '../../helpers/gateway/echo-upstream.js';
import {
  createCouchInstance,
  setInstancePod,
  startTestGateway,
} from '../../helpers/gateway/gateway-harness.js';
import { request } from '../../helpers/gateway/http-request.js';

const DOMAIN = 'couch.settee.test';

/**
 * Routing, header handling and the gateway's own errors, against an echo server standing where an
 * instance's CouchDB would be (it shows exactly which headers arrived, which CouchDB cannot).
 */
describe('the gateway routes instance requests and passes headers as a proxy must', () => {
  const namespace = useTestNamespace('gw-route');
  let echo: EchoUpstream;
  let gateway: Gateway;
  let base: string;

  beforeAll(async () => {
    const { kubeConfig } = testControlPlane();
    echo = await startEchoUpstream();
    await createCouchInstance(kubeConfig, { namespace: namespace.name, name: 'echo' });
    await setInstancePod(
      kubeConfig,
      { namespace: namespace.name, name: 'echo' },
      { port: echo.port, ready: true },
    );
    // An instance whose deletion waits on a finalizer nobody removes: it stays "being deleted".
    await createCouchInstance(
      kubeConfig,
      { namespace: namespace.name, name: 'leaving' },
      {},
      { finalizers: ['settee.dev/test-hold'] },
    );
    await kubeConfig.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({
      group: SETTEE_GROUP,
      version: SETTEE_VERSION,
      plural: COUCH_INSTANCE_PLURAL,
      namespace: namespace.name,
      name: 'leaving',
    });
    gateway = await startTestGateway({
      kubeConfig,
      namespace: namespace.name,
      env: { SETTEE_GATEWAY_DOMAIN: DOMAIN },
    });
    base = `${gateway.url}/db/${namespace.name}/echo`;
    await waitFor(async () => (await request(`${base}/_up`)).status === 200);
  });

  afterAll(async () => {
    const { kubeConfig } = testControlPlane();
    await kubeConfig
      .makeApiClient(CustomObjectsApi)
      .patchNamespacedCustomObject({
        group: SETTEE_GROUP,
        version: SETTEE_VERSION,
        plural: COUCH_INSTANCE_PLURAL,
        namespace: namespace.name,
        name: 'leaving',
        body: [{ op: 'remove', path: '/metadata/finalizers' }],
      })
      .catch(() => undefined);
    await gateway?.stop();
    await echo?.close();
  });

  const echoed = async (url: string, options: Parameters<typeof request>[1] = {}): Promise<EchoedRequest> => {
    const response = await request(url, options);
    expect(response.status).toBe(200);
    return JSON.parse(response.body) as EchoedRequest;
  };

  it('when the path form is used, then the instance sees its own path and query, still encoded', async () => {
    const seen = await echoed(`${base}/mydb/_design%2Ffoo/_view/v?key=%22a%22&limit=1`);
    expect(seen.url).toBe('/mydb/_design%2Ffoo/_view/v?key=%22a%22&limit=1');
    expect((await echoed(base)).url).toBe('/');
    expect((await echoed(`${base}?x=1`)).url).toBe('/?x=1');
  });

  it('when the host form is used, then <name>.<namespace>.<domain> routes to the instance with the path unchanged', async () => {
    const seen = await echoed(`${gateway.url}/db/any/path`, {
      headers: { Host: `echo.${namespace.name}.${DOMAIN}` },
    });
    expect(seen.url).toBe('/db/any/path');
    expect(seen.headers['x-forwarded-host']).toBe(`echo.${namespace.name}.${DOMAIN}`);
  });

  it('when a request carries hop-by-hop headers, then they stop at the gateway and end-to-end ones go through untouched', async () => {
    const seen = await echoed(`${base}/headers`, {
      headers: {
        Connection: 'keep-alive, X-Client-Private',
        'X-Client-Private': 'hop',
        'Keep-Alive': 'timeout=5',
        'Proxy-Authorization': 'Basic cHJveHk6cHJveHk=',
        TE: 'trailers',
        Authorization: 'Basic YWRtaW46c2VjcmV0',
        Cookie: 'AuthSession=abc',
        'X-Custom': 'kept',
      },
    });
    expect(seen.headers['x-client-private']).toBeUndefined();
    expect(seen.headers['keep-alive']).toBeUndefined();
    expect(seen.headers['proxy-authorization']).toBeUndefined();
    expect(seen.headers.te).toBeUndefined();
    expect(seen.headers.authorization).toBe('Basic YWRtaW46c2VjcmV0');
    expect(seen.headers.cookie).toBe('AuthSession=abc');
    expect(seen.headers['x-custom']).toBe('kept');
    expect(seen.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(seen.headers['x-forwarded-proto']).toBe('http');
    expect(seen.headers['x-forwarded-host']).toBe(new URL(gateway.url).host);
  });

  /** What an Ingress controller that terminated TLS for couch.example.com adds. */
  const fromIngress = {
    'X-Forwarded-Proto': 'https',
    'X-Forwarded-Host': 'couch.example.com',
    'X-Forwarded-For': '203.0.113.7',
  };

  it('when a peer that is not a trusted proxy sends X-Forwarded-*, then none of it is believed', async () => {
    const created = await request(`${base}/created`, { method: 'PUT', body: '{}', headers: fromIngress });
    expect(created.headers.location).toBe(`${gateway.url}/db/${namespace.name}/echo/db1/doc1`);
    expect(created.headers.location).toMatch(/^http:/);
    const seen = await echoed(`${base}/headers`, { headers: fromIngress });
    expect(seen.headers['x-forwarded-proto']).toBe('http');
    expect(seen.headers['x-forwarded-host']).toBe(new URL(gateway.url).host);
    expect(seen.headers['x-forwarded-for']).toBe('127.0.0.1');
  });

  it('when the peer is a trusted proxy saying the client used https, then Location is https and the instance is told https', async () => {
    const { kubeConfig } = testControlPlane();
    const trusting = await startTestGateway({
      kubeConfig,
      namespace: namespace.name,
      env: { SETTEE_GATEWAY_TRUSTED_PROXIES: '127.0.0.0/8' },
    });
    try {
      const trustingBase = `${trusting.url}/db/${namespace.name}/echo`;
      const protoOnly = await request(`${trustingBase}/created`, {
        method: 'PUT',
        body: '{}',
        headers: { 'X-Forwarded-Proto': 'https' },
      });
      expect(protoOnly.status).toBe(201);
      expect(protoOnly.headers.location).toBe(
        `https://${new URL(trusting.url).host}/db/${namespace.name}/echo/db1/doc1`,
      );
      const created = await request(`${trustingBase}/created`, {
        method: 'PUT',
        body: '{}',
        headers: fromIngress,
      });
      expect(created.headers.location).toBe(`https://couch.example.com/db/${namespace.name}/echo/db1/doc1`);
      const seen = await echoed(`${trustingBase}/headers`, { headers: fromIngress });
      expect(seen.headers['x-forwarded-proto']).toBe('https');
      expect(seen.headers['x-forwarded-host']).toBe('couch.example.com');
      expect(seen.headers['x-forwarded-for']).toBe('203.0.113.7, 127.0.0.1');
    } finally {
      await trusting.stop();
    }
  });

  it('when the instance answers with hop-by-hop headers, then the client does not get them', async () => {
    const response = await request(`${base}/hop-by-hop`);
    expect(response.status).toBe(200);
    expect(response.headers['x-upstream-private']).toBeUndefined();
    expect(response.headers['proxy-authenticate']).toBeUndefined();
    expect(response.headers['keep-alive']).toBeUndefined();
    expect(response.headers['x-end-to-end']).toBe('kept');
  });

  it('when the instance answers 201 with a Location and cookies, then both point under the instance prefix', async () => {
    const response = await request(`${base}/created`, { method: 'PUT', body: '{}' });
    expect(response.status).toBe(201);
    expect(response.headers.location).toBe(`${gateway.url}/db/${namespace.name}/echo/db1/doc1`);
    expect(response.headers['set-cookie']).toEqual([
      `AuthSession=abc; Version=1; Path=/db/${namespace.name}/echo; HttpOnly`,
      `Other=x; Path=/db/${namespace.name}/echo/sub`,
    ]);
  });

  it('when the instance sets cookies with several Paths, odd spellings or a Domain, then the path form scopes each to the prefix and neither form passes the Domain on', async () => {
    const prefix = `/db/${namespace.name}/echo`;
    const pathForm = await request(`${base}/cookies`);
    expect(pathForm.headers['set-cookie']).toEqual([
      `Y=2; Path=${prefix}/x`,
      `A=1; Path=${prefix}`,
      `B=1; Path=${prefix}`,
      `X=1; Path=${prefix}`,
    ]);
    const hostForm = await request(`${gateway.url}/cookies`, {
      headers: { Host: `echo.${namespace.name}.${DOMAIN}` },
    });
    expect(hostForm.headers['set-cookie']).toEqual([
      'Y=2; Path=/_utils;Path=/x',
      'A=1; Path =/',
      'B=1; Path="/"',
      'X=1',
    ]);
  });

  it('when an HTML attachment is served in the path form, then it is sandboxed and not sniffed; under /_utils/ and in the host form it is not', async () => {
    const values = (response: { rawHeaders: string[] }, name: string): string[] =>
      response.rawHeaders.filter((_, i) => i % 2 === 1 && response.rawHeaders[i - 1]?.toLowerCase() === name);
    const attachment = await request(`${base}/db/doc/page.html`);
    expect(attachment.headers['content-type']).toBe('text/html');
    expect(values(attachment, 'content-security-policy')).toEqual(["default-src 'self'", 'sandbox']);
    expect(values(attachment, 'x-content-type-options')).toEqual(['nosniff']);
    const fauxton = await request(`${base}/_utils/index.html`);
    expect(values(fauxton, 'content-security-policy')).toEqual(["default-src 'self'"]);
    expect(values(fauxton, 'x-content-type-options')).toEqual([]);
    const outOfFauxton = await request(`${base}/_utils/%2e%2e/db/doc/page.html`);
    expect(values(outOfFauxton, 'content-security-policy')).toEqual(["default-src 'self'", 'sandbox']);
    const hostForm = await request(`${gateway.url}/db/doc/page.html`, {
      headers: { Host: `echo.${namespace.name}.${DOMAIN}` },
    });
    expect(values(hostForm, 'content-security-policy')).toEqual(["default-src 'self'"]);
    expect(values(hostForm, 'x-content-type-options')).toEqual([]);
  });

  it('when any method is used, COPY and a chunked upload included, then it reaches the instance as sent', async () => {
    expect(
      (await echoed(`${base}/db/doc`, { method: 'COPY', headers: { Destination: 'doc2' } })).method,
    ).toBe('COPY');
    const chunked = await echoed(`${base}/upload`, {
      method: 'POST',
      headers: { 'Transfer-Encoding': 'chunked' },
      body: 'x'.repeat(70_000),
    });
    expect(chunked.bodyBytes).toBe(70_000);
    expect((await echoed(`${base}/x`, { method: 'DELETE' })).method).toBe('DELETE');
  });

  it('when an instance does not exist, then the answer is a CouchDB-shaped 404', async () => {
    const response = await request(`${gateway.url}/db/${namespace.name}/nobody/`);
    expect(response.status).toBe(404);
    expect(JSON.parse(response.body)).toEqual({
      error: 'not_found',
      reason: `there is no instance ${namespace.name}/nobody`,
    });
  });

  it('when an instance is being deleted, then the answer is a 404 saying so', async () => {
    await waitFor(async () => (await request(`${gateway.url}/db/${namespace.name}/leaving/`)).status === 404);
    const response = await request(`${gateway.url}/db/${namespace.name}/leaving/`);
    expect(JSON.parse(response.body)).toEqual({
      error: 'not_found',
      reason: `the instance ${namespace.name}/leaving is being deleted`,
    });
  });

  it('when the Host names too many labels under the domain or is not a host at all, then the answer is 400', async () => {
    const tooDeep = await request(`${gateway.url}/`, {
      headers: { Host: `a.echo.${namespace.name}.${DOMAIN}` },
    });
    expect(tooDeep.status).toBe(400);
    expect(JSON.parse(tooDeep.body)).toMatchObject({ error: 'bad_request' });
    const garbage = await request(`${gateway.url}/`, { headers: { Host: 'bad host/!' } });
    expect(garbage.status).toBe(400);
    expect(JSON.parse(garbage.body)).toMatchObject({ error: 'bad_request' });
  });

  it('when the path form names no instance, then the answer is 400', async () => {
    const response = await request(`${gateway.url}/db/${namespace.name}`);
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toMatchObject({ error: 'bad_request' });
  });

  it('when the instance breaks the connection before answering, then the answer is a 502', async () => {
    const response = await request(`${base}/destroy`, { method: 'POST', body: 'x' });
    expect(response.status).toBe(502);
    expect(JSON.parse(response.body)).toMatchObject({ error: 'bad_gateway' });
  });

  it("when the gateway's own routes are asked, then health, readiness and metrics answer and anything else is a JSON 404", async () => {
    expect((await request(`${gateway.url}/healthz`)).status).toBe(200);
    const ready = await request(`${gateway.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toEqual({ ready: true, failing: [] });
    const metrics = await request(`${gateway.url}/metrics`);
    expect(metrics.body).toContain('settee_gateway_wake_duration_seconds');
    const missing = await request(`${gateway.url}/nowhere`);
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toMatchObject({ error: 'not_found' });
  });

  it('when a certificate and key are configured, then the gateway serves HTTPS and tells the instance so', async () => {
    const { kubeConfig } = testControlPlane();
    const pki = await generateControlPlanePki();
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-gw-tls-'));
    await fs.writeFile(path.join(dir, 'tls.crt'), pki.apiserver.certPem);
    await fs.writeFile(path.join(dir, 'tls.key'), pki.apiserver.keyPem);
    const secure = await startTestGateway({
      kubeConfig,
      namespace: namespace.name,
      env: {
        SETTEE_GATEWAY_TLS_CERT: path.join(dir, 'tls.crt'),
        SETTEE_GATEWAY_TLS_KEY: path.join(dir, 'tls.key'),
      },
    });
    try {
      expect(secure.url).toMatch(/^https:/);
      const body = await new Promise<string>((resolve, reject) => {
        https
          .get(`${secure.url}/db/${namespace.name}/echo/tls`, { ca: pki.ca.certPem }, (res) => {
            let text = '';
            res.on('data', (chunk: Buffer) => (text += chunk.toString()));
            res.on('end', () => resolve(text));
          })
          .on('error', reject);
      });
      expect((JSON.parse(body) as EchoedRequest).headers['x-forwarded-proto']).toBe('https');
    } finally {
      await secure.stop();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
