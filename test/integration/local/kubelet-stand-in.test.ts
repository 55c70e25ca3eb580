import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  AppsV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1Container,
  type V1Pod,
} from '@kubernetes/client-node';
import { adminSecretName, LABEL_INSTANCE } from '../../../api/contract.js';
import { COUCHDB_PROBES } from '../../../operator/resources/couch-instance/statefulset.js';
import {
  startKubeletStandIn,
  type KubeletStandIn,
} from '../../../local/kubelet-stand-in/kubelet-stand-in.js';
import { ENGINE_PID_FILE } from '../../../local/kubelet-stand-in/engine-pid-file.js';
import { TEST_NODES } from '../../helpers/control-plane-env.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import { testLogger } from '../../helpers/gateway/gateway-harness.js';
import { basicAuth, request } from '../../helpers/gateway/http-request.js';
import { waitFor } from '../../../local/wait.js';
import {
  admin,
  CONFIG_VOLUME,
  couchContainer,
  NAME,
  statefulSet,
  UUID,
} from '../../helpers/local/stand-in-statefulset.js';

/**
 * A pod's engine started (or restarted) by the stand-in, Ready: claim, scheduling by the real
 * scheduler, the engine process and its probes, seconds on a quiet machine and far more under CI load.
 */
const ENGINE_START_MS = 60_000;
/** Status the stand-in or a controller writes, and the admin CouchDB hashes after it answers. */
const STATUS_MS = 20_000;
/** local/wait.ts's waitFor at 50 ms: the stand-in's status writes take milliseconds. */
const until = <T>(what: string, check: () => Promise<T | undefined>, timeoutMs = STATUS_MS): Promise<T> =>
  waitFor(what, check, { timeoutMs, intervalMs: 50 });

/**
 * The local platform's kubelet stand-in, against StatefulSets shaped as the operator writes them:
 * the real StatefulSet controller makes the pod and its claim, the real scheduler binds the pod to
 * a test node, the stand-in provisions the claim's volume and runs the pod.
 */
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
      nodes: TEST_NODES,
      // The BackOff Event is written only if the exit is handled within baseMs of it: 200 ms was
      // less than one stall of a loaded CI machine (no Event, the crash test failed). Seconds cost
      // the crash test one wait of baseMs, and it is the only one that restarts twice.
      restartBackoff: { baseMs: 4_000, maxMs: 8_000 },
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

  /** The engine process serving the pod's address. */
  const listeningPid = (ip: string): number => {
    const pid = Number(
      execFileSync('bash', [
        '-c',
        `ss -Hltnp 'src ${ip}:5984' | sed -n 's/.*pid=\\([0-9]*\\).*/\\1/p' | head -1`,
      ])
        .toString()
        .trim(),
    );
    expect(pid).toBeGreaterThan(0);
    return pid;
  };

  const readyPod = () =>
    until(
      'the pod Ready',
      async () => {
        const current = await readPod();
        return current?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
          ? current
          : undefined;
      },
      ENGINE_START_MS,
    );

  it('when a StatefulSet asks for one replica, then an engine runs as its pod on its own address and port 5984, with the Secret admin and the ConfigMap uuid, and the pod and status say ready', async () => {
    const apps = testControlPlane().kubeConfig.makeApiClient(AppsV1Api);
    await apps.createNamespacedStatefulSet({ namespace: namespace.name, body: statefulSet(1) });
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
        const current = await apps.readNamespacedStatefulSet({ name: NAME, namespace: namespace.name });
        return current.status?.readyReplicas === 1 ? current : undefined;
      })
    ).status;
    expect(status).toMatchObject({ replicas: 1, readyReplicas: 1 });
  }, 120_000);

  it("when the pod's claim is made, then the stand-in binds it to a folder of its own under the data root", async () => {
    const core = testControlPlane().kubeConfig.makeApiClient(CoreV1Api);
    const claim = await core.readNamespacedPersistentVolumeClaim({
      name: `data-${NAME}-0`,
      namespace: namespace.name,
    });
    expect(claim.status?.phase).toBe('Bound');
    expect(claim.spec?.storageClassName).toBe('settee-local');
    expect(claim.spec?.volumeName).toBe(`pvc-${claim.metadata?.uid}`);
    const entries = await fs.readdir(path.join(dataRoot, claim.spec?.volumeName ?? ''));
    expect(entries.length).toBeGreaterThan(0);
  });

  it('when its claim asks for more space, then the volume and the claim grow to it', async () => {
    const core = testControlPlane().kubeConfig.makeApiClient(CoreV1Api);
    await core.patchNamespacedPersistentVolumeClaim(
      {
        name: `data-${NAME}-0`,
        namespace: namespace.name,
        body: { spec: { resources: { requests: { storage: '2Gi' } } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const claim = await until('the claim at 2Gi', async () => {
      const current = await core.readNamespacedPersistentVolumeClaim({
        name: `data-${NAME}-0`,
        namespace: namespace.name,
      });
      return current.status?.capacity?.storage === '2Gi' ? current : undefined;
    });
    const volume = await core.readPersistentVolume({ name: claim.spec?.volumeName ?? '' });
    expect(volume.spec?.capacity?.storage).toBe('2Gi');
  });

  it("when the engine dies, then the stand-in restarts it at once by the restart policy and counts the restart; when it dies again soon, then the restart waits out CrashLoopBackOff, as a kubelet's", async () => {
    const before = await readyPod();
    const ip = before.status?.podIP ?? '';
    const crash = async (restarts: number): Promise<V1Pod> => {
      process.kill(listeningPid(ip), 'SIGKILL');
      return until(
        `the engine restarted ${restarts} time(s) and ready`,
        async () => {
          const current = await readPod();
          const status = current?.status?.containerStatuses?.[0];
          return status?.restartCount === restarts && status.ready ? current : undefined;
        },
        ENGINE_START_MS,
      );
    };
    // The stand-in writes its BackOff event before it waits, so it is there before the restart.
    const backOffEvents = async (): Promise<number> =>
      (
        await testControlPlane()
          .kubeConfig.makeApiClient(CoreV1Api)
          .listNamespacedEvent({ namespace: namespace.name })
      ).items.filter((e) => e.reason === 'BackOff' && e.involvedObject.name === before.metadata?.name).length;
    const after = await crash(1);
    expect(after.status?.containerStatuses?.[0]?.lastState?.terminated).toMatchObject({ reason: 'Error' });
    expect(after.status?.podIP).toBe(ip);
    // The first crash of a pod is restarted at once: no back-off, as a kubelet's first restart.
    expect(await backOffEvents()).toBe(0);
    await crash(2);
    expect(await backOffEvents()).toBeGreaterThan(0);
  }, 150_000);

  it('when the StatefulSet is scaled to zero, then the engine stops, the pod goes and the status says zero', async () => {
    const before = await readPod();
    const ip = before?.status?.podIP ?? '';
    await scale(0);
    await until('the pod gone', async () => ((await readPod()) === undefined ? true : undefined));
    const apps = testControlPlane().kubeConfig.makeApiClient(AppsV1Api);
    const status = await until('the StatefulSet status replicas 0', async () => {
      const current = await apps.readNamespacedStatefulSet({ name: NAME, namespace: namespace.name });
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

  it("when the engine's record cannot be written in its volume, then the start fails and the engine it started is stopped, not left serving beside the next one", async () => {
    const core = testControlPlane().kubeConfig.makeApiClient(CoreV1Api);
    const pod = await readyPod();
    const ip = pod.status?.podIP ?? '';
    const claim = await core.readNamespacedPersistentVolumeClaim({
      name: `data-${NAME}-0`,
      namespace: namespace.name,
    });
    // A folder where the record goes: its write fails (EISDIR) as on a full disk; the engine runs.
    const record = path.join(dataRoot, claim.spec?.volumeName ?? '', ENGINE_PID_FILE);
    await fs.rm(record, { force: true });
    await fs.mkdir(record);
    process.kill(listeningPid(ip), 'SIGKILL');
    await until(
      'the Failed Event of the restart',
      async () =>
        (await core.listNamespacedEvent({ namespace: namespace.name })).items.some(
          (e) =>
            e.reason === 'Failed' &&
            e.involvedObject.uid === pod.metadata?.uid &&
            e.message?.includes('EISDIR'),
        ) || undefined,
      ENGINE_START_MS,
    );
    await scale(0);
    // Its worker may be in a start (an engine booting) when the pod goes: that start is waited out.
    await until(
      'the pod gone',
      async () => ((await readPod()) === undefined ? true : undefined),
      ENGINE_START_MS,
    );
    await expect(request(`http://${ip}:5984/`)).rejects.toThrow(/ECONNREFUSED/);
  }, 150_000);

  it('when a pod names an image the stand-in cannot run, then it waits with a reason that says so', async () => {
    const core = testControlPlane().kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedPod({
      namespace: namespace.name,
      body: { metadata: { name: 'other' }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } },
    });
    const waiting = await until('the nginx pod waiting', async () => {
      const pod = await core.readNamespacedPod({ name: 'other', namespace: namespace.name });
      return pod.status?.containerStatuses?.[0]?.state?.waiting;
    });
    expect(waiting.reason).toBe('ImageNotRunnableLocally');
    expect(waiting.message).toContain('nginx:1.27');
    await core.deleteNamespacedPod({ name: 'other', namespace: namespace.name });
    await until('the nginx pod gone', () =>
      core.readNamespacedPod({ name: 'other', namespace: namespace.name }).then(
        () => undefined,
        () => true,
      ),
    );
  });

  it("when a pod's startup probe allows less time than the engine's boot, then it is killed and restarted as a kubelet would; with the operator's probes the same engine starts on its first run", async () => {
    const core = testControlPlane().kubeConfig.makeApiClient(CoreV1Api);
    const pod = (name: string, probes: Partial<V1Container>): V1Pod => ({
      metadata: { name },
      spec: {
        containers: [couchContainer(probes)],
        volumes: [CONFIG_VOLUME, { name: 'data', emptyDir: {} }],
      },
    });
    const container = (name: string) =>
      core
        .readNamespacedPod({ name, namespace: namespace.name })
        .then((current) => current.status?.containerStatuses?.[0]);
    const tight = { ...COUCHDB_PROBES.startupProbe, failureThreshold: 1 };
    // One failure allowed, and the first probe runs as the container starts: no engine answers then.
    await core.createNamespacedPod({
      namespace: namespace.name,
      body: pod('tight', { startupProbe: tight }),
    });
    await core.createNamespacedPod({ namespace: namespace.name, body: pod('operator', COUCHDB_PROBES) });
    try {
      const restarted = await until(
        'the tight pod restarted',
        async () => {
          const status = await container('tight');
          return (status?.restartCount ?? 0) >= 1 ? status : undefined;
        },
        ENGINE_START_MS,
      );
      expect(restarted?.started).not.toBe(true);
      const events = await core.listNamespacedEvent({
        namespace: namespace.name,
        fieldSelector: 'involvedObject.name=tight',
      });
      expect(events.items.map((event) => event.message)).toContainEqual(
        expect.stringMatching(/^Startup probe failed: /),
      );
      const operatorRun = await until(
        'the operator-probed pod ready',
        async () => {
          const status = await container('operator');
          return status?.ready ? status : undefined;
        },
        ENGINE_START_MS,
      );
      expect(operatorRun.restartCount).toBe(0);
    } finally {
      await Promise.all(
        ['tight', 'operator'].map((name) =>
          core.deleteNamespacedPod({ name, namespace: namespace.name, gracePeriodSeconds: 0 }),
        ),
      );
    }
  }, 150_000);

  it('when the StatefulSet is deleted, then the garbage collector removes its pod and claim, and the volume and its folder go by the Delete policy', async () => {
    const core = testControlPlane().kubeConfig.makeApiClient(CoreV1Api);
    const apps = testControlPlane().kubeConfig.makeApiClient(AppsV1Api);
    const claim = await core.readNamespacedPersistentVolumeClaim({
      name: `data-${NAME}-0`,
      namespace: namespace.name,
    });
    const volumeName = claim.spec?.volumeName ?? '';
    await apps.deleteNamespacedStatefulSet({ name: NAME, namespace: namespace.name });
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
    await expect(fs.stat(path.join(dataRoot, volumeName))).rejects.toThrow(/ENOENT/);
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
