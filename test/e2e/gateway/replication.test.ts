import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startCouchEngine, type CouchEngine } from '../../../local/couch-engine/index.js';
import { basicAuth, request } from '../../helpers/gateway/http-request.js';
import {
  createServingInstance,
  startTestPlatform,
  type TestPlatform,
} from '../../helpers/gateway/platform-harness.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';

/**
 * Replication between an instance (through the gateway's path form) and a second Apache CouchDB, in
 * both directions, posted to /_replicator. The instance's endpoint carries its credentials in its
 * userinfo, as the admin Secret's `url` does; the other server's password holds ':' and '@', which
 * CouchDB 3.5's replicator cannot take from a URL's userinfo even percent-encoded (its _session
 * login is refused), so that endpoint names them in `auth.basic`, the form CouchDB documents.
 *
 * Through the path form the replicator's session login goes to the gateway's root (`/_session`, not
 * under the instance's prefix) and gets 404, on which CouchDB falls back to basic auth per request.
 */
describe('an instance replicates to and from another CouchDB server', () => {
  const namespace = useTestNamespace('e2e-repl');
  const otherAdmin = { username: 'other', password: 'other:secret@1' };
  let platform: TestPlatform;
  let other: CouchEngine;
  let otherDir: string;
  let base: string;
  let auth: string;
  /** The instance's endpoint with its credentials as userinfo: what the admin Secret's `url` holds. */
  let instanceUrlWithCredentials: string;

  /** A replication endpoint on the other server, its credentials apart from the URL. */
  const otherEndpoint = (db: string): object => ({
    url: `http://127.0.0.1:${other.port}/${db}`,
    auth: { basic: otherAdmin },
  });
  const otherAuth = basicAuth(otherAdmin.username, otherAdmin.password);

  beforeAll(async () => {
    const { kubeConfig } = testControlPlane();
    const ref = { namespace: namespace.name, name: 'rep' };
    otherDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-other-couch-'));
    [platform, other] = await Promise.all([
      startTestPlatform({ kubeConfig, namespace: namespace.name }),
      startCouchEngine({ dataDir: otherDir, admin: otherAdmin }),
    ]);
    const serving = await createServingInstance(kubeConfig, ref, {
      plan: 'free',
      hibernation: { idleAfter: '10m' },
    });
    ({ endpoint: base, auth } = serving);
    instanceUrlWithCredentials = serving.admin.url;
  }, 90_000);

  afterAll(async () => {
    await platform?.stop();
    await other?.stop();
    await fs.rm(otherDir, { recursive: true, force: true });
  });

  const put = async (url: string, authorization: string, body?: object): Promise<number> =>
    (
      await request(url, {
        method: 'PUT',
        headers: { Authorization: authorization, 'Content-Type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      })
    ).status;

  const postReplication = async (
    replicatorUrl: string,
    authorization: string,
    job: object,
  ): Promise<void> => {
    const response = await request(`${replicatorUrl}/_replicator`, {
      method: 'POST',
      headers: { Authorization: authorization, 'Content-Type': 'application/json' },
      body: JSON.stringify(job),
    });
    expect(response.status).toBe(201);
  };

  const docArrives = (url: string, authorization: string): Promise<void> =>
    waitUntil(async () => (await request(url, { headers: { Authorization: authorization } })).status === 200);

  it('when a one-shot job with create_target is posted to the instance, then its database is copied to the other server', async () => {
    expect(await put(`${base}/outbound`, auth)).toBe(201);
    expect(await put(`${base}/outbound/a`, auth, { from: 'instance' })).toBe(201);
    // CouchDB 3 takes URLs only (no bare database names): the instance reaches itself at its endpoint.
    await postReplication(base, auth, {
      source: `${instanceUrlWithCredentials}/outbound`,
      target: otherEndpoint('outbound-copy'),
      create_target: true,
    });
    await docArrives(`http://127.0.0.1:${other.port}/outbound-copy/a`, otherAuth);
  });

  it('when a one-shot job with create_target is posted to the other server, then it copies into the instance through the gateway', async () => {
    expect(await put(`http://127.0.0.1:${other.port}/inbound`, otherAuth)).toBe(201);
    expect(await put(`http://127.0.0.1:${other.port}/inbound/b`, otherAuth, { from: 'other' })).toBe(201);
    await postReplication(`http://127.0.0.1:${other.port}`, otherAuth, {
      source: otherEndpoint('inbound'),
      target: `${instanceUrlWithCredentials}/inbound-copy`,
      create_target: true,
    });
    await docArrives(`${base}/inbound-copy/b`, auth);
  });

  it('when a continuous job on the instance pulls from the other server, then later writes there keep arriving', async () => {
    expect(await put(`http://127.0.0.1:${other.port}/live-source`, otherAuth)).toBe(201);
    await postReplication(base, auth, {
      source: otherEndpoint('live-source'),
      target: `${instanceUrlWithCredentials}/live-in`,
      create_target: true,
      continuous: true,
    });
    for (const id of ['c1', 'c2']) {
      expect(await put(`http://127.0.0.1:${other.port}/live-source/${id}`, otherAuth, { n: id })).toBe(201);
      await docArrives(`${base}/live-in/${id}`, auth);
    }
  });

  it('when a continuous job on the other server pulls from the instance through the gateway, then later writes to the instance keep arriving', async () => {
    expect(await put(`${base}/live-out`, auth)).toBe(201);
    await postReplication(`http://127.0.0.1:${other.port}`, otherAuth, {
      source: `${instanceUrlWithCredentials}/live-out`,
      target: otherEndpoint('live-out-copy'),
      create_target: true,
      continuous: true,
    });
    for (const id of ['d1', 'd2']) {
      expect(await put(`${base}/live-out/${id}`, auth, { n: id })).toBe(201);
      await docArrives(`http://127.0.0.1:${other.port}/live-out-copy/${id}`, otherAuth);
    }
  });
});

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('replication did not deliver in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
