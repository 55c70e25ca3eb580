import fs from 'node:fs/promises';
import path from 'node:path';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { LABEL_INSTANCE } from '../../../api/contract.js';
import { TEST_NODES } from '../../helpers/control-plane-env.js';
import { basicAuth, request } from '../../helpers/gateway/http-request.js';
import { until, useKubeletStandIn } from '../../helpers/local/kubelet-stand-in-suite.js';
import { admin, NAME, UUID } from '../../helpers/local/stand-in-statefulset.js';

/**
 * The local platform's kubelet stand-in, against StatefulSets shaped as the operator writes them:
 * the real StatefulSet controller makes the pod and its claim, the real scheduler binds the pod to
 * a test node, the stand-in provisions the claim's volume and runs the pod. This file: a pod's
 * life and its volume's, from the first replica to the StatefulSet's deletion; the container's
 * failures and restarts are kubelet-stand-in-restarts.test.ts.
 */
describe('the kubelet stand-in', () => {
  const suite = useKubeletStandIn();
  const { readPod, readyPod, scale } = suite;

  it('when a StatefulSet asks for one replica, then an engine runs as its pod on its own address and port 5984, with the Secret admin and the ConfigMap uuid, and the pod and status say ready', async () => {
    await suite.createStatefulSet(1);
    const apps = suite.apps();
    const pod = await readyPod();
    const ip = pod.status?.podIP ?? '';
    expect(ip).toMatch(/^127\.\d+\.\d+\.\d+$/);
    expect(ip).not.toBe('127.0.0.1');
    expect(TEST_NODES.map((n) => n.name)).toContain(pod.spec?.nodeName);
    expect(pod.metadata?.labels?.[LABEL_INSTANCE]).toBe(NAME);
    expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'StatefulSet', name: NAME });
    expect(pod.spec?.containers[0]?.ports?.[0]?.containerPort).toBe(5984);
    const port = 5984;
    const welcome = await request(`http://${ip}:${port}/`);
    expect(JSON.parse(welcome.body)).toMatchObject({ couchdb: 'Welcome', uuid: UUID });
    await waitForAdmin(`http://${ip}:${port}`);
    const created = await request(`http://${ip}:${port}/kept`, {
      method: 'PUT',
      headers: { Authorization: basicAuth(admin.username, admin.password) },
    });
    expect(created.status).toBe(201);
    await request(`http://${ip}:${port}/kept/doc`, {
      method: 'PUT',
      headers: {
        Authorization: basicAuth(admin.username, admin.password),
        'Content-Type': 'application/json',
      },
      body: '{"survives":true}',
    });
    const status = (
      await until('the StatefulSet status readyReplicas 1', async () => {
        const current = await apps.readNamespacedStatefulSet({ name: NAME, namespace: suite.namespace });
        return current.status?.readyReplicas === 1 ? current : undefined;
      })
    ).status;
    expect(status).toMatchObject({ replicas: 1, readyReplicas: 1 });
  }, 120_000);

  it("when the pod's claim is made, then the stand-in binds it to a folder of its own under the data root", async () => {
    const core = suite.core();
    const claim = await core.readNamespacedPersistentVolumeClaim({
      name: `data-${NAME}-0`,
      namespace: suite.namespace,
    });
    expect(claim.status?.phase).toBe('Bound');
    expect(claim.spec?.storageClassName).toBe('settee-local');
    expect(claim.spec?.volumeName).toBe(`pvc-${claim.metadata?.uid}`);
    const entries = await fs.readdir(path.join(suite.dataRoot, claim.spec?.volumeName ?? ''));
    expect(entries.length).toBeGreaterThan(0);
  });

  it('when its claim asks for more space, then the volume and the claim grow to it', async () => {
    const core = suite.core();
    await core.patchNamespacedPersistentVolumeClaim(
      {
        name: `data-${NAME}-0`,
        namespace: suite.namespace,
        body: { spec: { resources: { requests: { storage: '2Gi' } } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const claim = await until('the claim at 2Gi', async () => {
      const current = await core.readNamespacedPersistentVolumeClaim({
        name: `data-${NAME}-0`,
        namespace: suite.namespace,
      });
      return current.status?.capacity?.storage === '2Gi' ? current : undefined;
    });
    const volume = await core.readPersistentVolume({ name: claim.spec?.volumeName ?? '' });
    expect(volume.spec?.capacity?.storage).toBe('2Gi');
  });

  it('when the StatefulSet is scaled to zero, then the engine stops, the pod goes and the status says zero', async () => {
    const before = await readPod();
    const ip = before?.status?.podIP ?? '';
    await scale(0);
    await until('the pod gone', async () => ((await readPod()) === undefined ? true : undefined));
    const apps = suite.apps();
    const status = await until('the StatefulSet status replicas 0', async () => {
      const current = await apps.readNamespacedStatefulSet({ name: NAME, namespace: suite.namespace });
      return current.status?.replicas === 0 ? current.status : undefined;
    });
    expect(status.readyReplicas ?? 0).toBe(0); // the API server drops a zero
    await expect(request(`http://${ip}:5984/`)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('when it is scaled back to one, then the engine starts on the kept claim and its data is there', async () => {
    await scale(1);
    const pod = await readyPod();
    await waitForAdmin(`http://${pod.status?.podIP}:5984`);
    const doc = await request(`http://${pod.status?.podIP}:5984/kept/doc`, {
      headers: { Authorization: basicAuth(admin.username, admin.password) },
    });
    expect(JSON.parse(doc.body)).toMatchObject({ survives: true });
  }, 90_000);

  it('when the StatefulSet is deleted, then the garbage collector removes its pod and claim, and the volume and its folder go by the Delete policy', async () => {
    const core = suite.core();
    const apps = suite.apps();
    const claim = await core.readNamespacedPersistentVolumeClaim({
      name: `data-${NAME}-0`,
      namespace: suite.namespace,
    });
    const volumeName = claim.spec?.volumeName ?? '';
    await apps.deleteNamespacedStatefulSet({ name: NAME, namespace: suite.namespace });
    await until('the pod gone', async () => ((await readPod()) === undefined ? true : undefined), 45_000);
    await until(
      'the volume gone',
      () =>
        core.readPersistentVolume({ name: volumeName }).then(
          () => undefined,
          () => true,
        ),
      45_000,
    );
    await expect(fs.stat(path.join(suite.dataRoot, volumeName))).rejects.toThrow(/ENOENT/);
  });
});

/**
 * Apache CouchDB hashes a COUCHDB_PASSWORD it was given in plain text in the background after it
 * starts answering (about 0.5 s), as in a cluster: until then the admin is refused.
 */
async function waitForAdmin(url: string): Promise<void> {
  await until(`the admin's session at ${url}`, async () => {
    const session = await request(`${url}/_session`, {
      headers: { Authorization: basicAuth(admin.username, admin.password) },
    });
    return (JSON.parse(session.body) as { userCtx?: { name?: string } }).userCtx?.name === admin.username
      ? true
      : undefined;
  });
}
