import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  AppsV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import { adminSecretName, LABEL_INSTANCE } from '../../../api/contract.js';
import {
  startKubeletStandIn,
  type KubeletStandIn,
} from '../../../local/kubelet-stand-in/kubelet-stand-in.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import { testLogger } from '../../helpers/gateway/gateway-harness.js';
import { basicAuth, request } from '../../helpers/gateway/http-request.js';

const NAME = 'standin';
const UUID = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
const admin = { username: 'admin', password: 'stand-in-secret' };

function statefulSet(replicas: number): V1StatefulSet {
  const labels = { [LABEL_INSTANCE]: NAME };
  return {
    metadata: { name: NAME, labels },
    spec: {
      replicas,
      serviceName: `${NAME}-headless`,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [
            {
              name: 'couchdb',
              image: 'couchdb:3.5.1',
              ports: [{ name: 'http', containerPort: 5984, protocol: 'TCP' }],
              volumeMounts: [
                { name: 'data', mountPath: '/opt/couchdb/data' },
                { name: 'config', mountPath: '/opt/couchdb/etc/local.d' },
              ],
            },
          ],
          volumes: [{ name: 'config', projected: { sources: [{ configMap: { name: `${NAME}-config` } }] } }],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        },
      ],
    },
  };
}

/** The local platform's kubelet stand-in, against StatefulSets shaped as the operator writes them. */
describe('the kubelet stand-in', () => {
  const namespace = useTestNamespace('kubelet');
  let dataRoot: string;
  let standIn: KubeletStandIn;

  beforeAll(async () => {
    const { kubeConfig } = testControlPlane();
    const core = kubeConfig.makeApiClient(CoreV1Api);
    dataRoot = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-kubelet-'));
    await core.createNamespacedSecret({
      namespace: namespace.name,
      body: {
        metadata: { name: adminSecretName(NAME), labels: { [LABEL_INSTANCE]: NAME } },
        stringData: { username: admin.username, password: admin.password },
      },
    });
    await core.createNamespacedConfigMap({
      namespace: namespace.name,
      body: {
        metadata: { name: `${NAME}-config`, labels: { [LABEL_INSTANCE]: NAME } },
        data: { 'settee.ini': `[couchdb]\nuuid = ${UUID}\nsingle_node = true\n` },
      },
    });
    standIn = await startKubeletStandIn({
      kubeConfig,
      namespace: namespace.name,
      dataRoot,
      logger: testLogger('kubelet-stand-in'),
    });
  });

  afterAll(async () => {
    await standIn?.stop();
    await fs.rm(dataRoot, { recursive: true, force: true });
  });

  const readPod = () =>
    testControlPlane()
      .kubeConfig.makeApiClient(CoreV1Api)
      .readNamespacedPod({ name: `${NAME}-0`, namespace: namespace.name })
      .catch(() => undefined);

  const scale = async (replicas: number): Promise<void> => {
    const apps = testControlPlane().kubeConfig.makeApiClient(AppsV1Api);
    await apps.patchNamespacedStatefulSet(
      { name: NAME, namespace: namespace.name, body: { spec: { replicas } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  };

  it('when a StatefulSet asks for one replica, then an engine runs as its pod with the Secret admin and the ConfigMap uuid, and the pod and status say ready', async () => {
    const apps = testControlPlane().kubeConfig.makeApiClient(AppsV1Api);
    await apps.createNamespacedStatefulSet({ namespace: namespace.name, body: statefulSet(1) });
    const pod = await waitFor(async () => {
      const current = await readPod();
      return current?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
        ? current
        : undefined;
    });
    expect(pod.status?.podIP).toBe('127.0.0.1');
    expect(pod.metadata?.labels?.[LABEL_INSTANCE]).toBe(NAME);
    expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'StatefulSet', name: NAME });
    const port = pod.spec?.containers[0]?.ports?.[0]?.containerPort;
    const welcome = await request(`http://127.0.0.1:${port}/`);
    expect(JSON.parse(welcome.body)).toMatchObject({ couchdb: 'Welcome', uuid: UUID });
    const created = await request(`http://127.0.0.1:${port}/kept`, {
      method: 'PUT',
      headers: { Authorization: basicAuth(admin.username, admin.password) },
    });
    expect(created.status).toBe(201);
    await request(`http://127.0.0.1:${port}/kept/doc`, {
      method: 'PUT',
      headers: {
        Authorization: basicAuth(admin.username, admin.password),
        'Content-Type': 'application/json',
      },
      body: '{"survives":true}',
    });
    const status = (
      await waitFor(async () => {
        const current = await apps.readNamespacedStatefulSet({ name: NAME, namespace: namespace.name });
        return current.status?.readyReplicas === 1 ? current : undefined;
      })
    ).status;
    expect(status).toMatchObject({ replicas: 1, readyReplicas: 1 });
  });

  it('when the StatefulSet is scaled to zero, then the engine stops, the pod goes and the status says zero', async () => {
    const before = await readPod();
    const port = before?.spec?.containers[0]?.ports?.[0]?.containerPort;
    await scale(0);
    await waitFor(async () => ((await readPod()) === undefined ? true : undefined));
    const apps = testControlPlane().kubeConfig.makeApiClient(AppsV1Api);
    const status = await waitFor(async () => {
      const current = await apps.readNamespacedStatefulSet({ name: NAME, namespace: namespace.name });
      return current.status?.replicas === 0 ? current.status : undefined;
    });
    expect(status.readyReplicas ?? 0).toBe(0); // the API server drops a zero
    await expect(request(`http://127.0.0.1:${port}/`)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('when it is scaled back to one, then the engine starts on the kept data folder', async () => {
    await scale(1);
    const pod = await waitFor(async () => {
      const current = await readPod();
      return current?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
        ? current
        : undefined;
    });
    const port = pod.spec?.containers[0]?.ports?.[0]?.containerPort;
    const doc = await request(`http://127.0.0.1:${port}/kept/doc`, {
      headers: { Authorization: basicAuth(admin.username, admin.password) },
    });
    expect(JSON.parse(doc.body)).toMatchObject({ survives: true });
  });
});

async function waitFor<T>(check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
