import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AuthenticationV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startControlPlane, type ControlPlane } from '../../../local/control-plane.js';

/** Who the API server takes the token's bearer for (a SelfSubjectReview), or the HTTP error. */
async function whoAmI(plane: ControlPlane, token: string): Promise<string> {
  const cluster = plane.kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('the control plane kubeconfig names no cluster');
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [cluster],
    users: [{ name: 'bearer', token }],
    contexts: [{ name: 'bearer', cluster: cluster.name, user: 'bearer' }],
    currentContext: 'bearer',
  });
  const review = await config
    .makeApiClient(AuthenticationV1Api)
    .createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
  return review.status?.userInfo?.username ?? '';
}

/*
 * make run's restart (local/platform.ts): etcd's data and the PKI kept in folders of their own,
 * so a token minted before the restart is still honoured after it, for an object that came back.
 */
describe('the embedded control plane restarted on kept etcd data and PKI', () => {
  let stateDir: string;

  beforeAll(async () => {
    stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-restart-test-'));
  });
  afterAll(async () => {
    await fs.rm(stateDir, { recursive: true, force: true });
  });

  it('when it is stopped and started again, then the ServiceAccount and the token minted before still authenticate', async () => {
    const kept = { etcdDataDir: path.join(stateDir, 'etcd'), pkiDir: path.join(stateDir, 'pki') };
    const first = await startControlPlane(kept);
    let token: string;
    try {
      const core = first.kubeConfig.makeApiClient(CoreV1Api);
      await core.createNamespacedServiceAccount({
        namespace: 'default',
        body: { metadata: { name: 'kept' } },
      });
      const request = await core.createNamespacedServiceAccountToken({
        name: 'kept',
        namespace: 'default',
        body: { spec: { audiences: [], expirationSeconds: 3600 } },
      });
      token = request.status?.token ?? '';
      expect(await whoAmI(first, token)).toBe('system:serviceaccount:default:kept');
    } finally {
      await first.stop();
    }

    const second = await startControlPlane(kept);
    try {
      expect(await whoAmI(second, token)).toBe('system:serviceaccount:default:kept');
    } finally {
      await second.stop();
    }
  }, 150_000);
});
