import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AuthenticationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { keepTokenFileFresh, type FreshTokenFile } from '../../../local/token-file.js';
import { waitFor } from '../../../local/wait.js';
import { kubeConfigWithToken } from '../../helpers/console/console-harness.js';
import { testControlPlane } from '../../helpers/kube.js';

/**
 * `make run`'s long-lived tokens (the demo user's, the console's own) against a real API server:
 * the file is rewritten with a fresh TokenRequest token before the old one expires, and a kubeconfig
 * that names the file (client-node's tokenFile auth provider) authenticates with it.
 */
describe('a ServiceAccount token file kept fresh', () => {
  const { kubeConfig: admin } = testControlPlane();
  const core = admin.makeApiClient(CoreV1Api);
  const namespace = `token-file-${crypto.randomBytes(3).toString('hex')}`;
  let dir: string;
  let fresh: FreshTokenFile | undefined;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-token-file-'));
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'demo-user' } } });
  });

  afterAll(async () => {
    fresh?.stop();
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
    await fs.rm(dir, { recursive: true, force: true });
  });

  const whoIs = async (token: string): Promise<string | undefined> => {
    const review = await admin.makeApiClient(AuthenticationV1Api).createTokenReview({
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
    });
    return review.status?.authenticated ? review.status.user?.username : undefined;
  };

  it('when the refresh interval passes, then the file holds a new token that the API server accepts, written whole with mode 0600', async () => {
    const file = path.join(dir, 'demo-token');
    fresh = await keepTokenFileFresh(admin, {
      namespace,
      serviceAccount: 'demo-user',
      file,
      lifetimeSeconds: 600,
      refreshEveryMs: 1_500,
    });
    const first = await fs.readFile(file, 'utf8');
    expect(first).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    expect(await whoIs(first)).toBe(`system:serviceaccount:${namespace}:demo-user`);
    const second = await waitFor(
      'a fresh token',
      async () => {
        const now = await fs.readFile(file, 'utf8');
        return now !== first ? now : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 200 },
    );
    expect(await whoIs(second)).toBe(`system:serviceaccount:${namespace}:demo-user`);
    expect(JSON.parse(Buffer.from(second.split('.')[1] ?? '', 'base64url').toString()).exp).toBeGreaterThan(
      JSON.parse(Buffer.from(first.split('.')[1] ?? '', 'base64url').toString()).exp as number,
    );
  });

  it('when a kubeconfig names the token file, then requests authenticate as the ServiceAccount', async () => {
    const file = path.join(dir, 'demo-token');
    const config = kubeConfigWithToken(admin, 'unused');
    const user = config.getCurrentUser();
    if (!user) throw new Error('no user');
    config.loadFromOptions({
      clusters: config.clusters,
      contexts: config.contexts,
      currentContext: config.currentContext,
      users: [{ name: user.name, authProvider: { name: 'tokenFile', config: { tokenFile: file } } }],
    });
    // The ServiceAccount may not list namespaces: a 403 naming it proves who the request was.
    const answer = await config
      .makeApiClient(CoreV1Api)
      .listNamespace()
      .then(
        () => 'allowed',
        (err: { body?: string }) => String(err.body),
      );
    expect(answer).toContain(`system:serviceaccount:${namespace}:demo-user`);
  });
});
