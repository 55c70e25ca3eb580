import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { LABEL_INSTANCE } from '../../../api/contract.js';
import { COUCHDB_PROBES } from '../../../operator/resources/couch-instance/statefulset.js';
import { ENGINE_PID_FILE } from '../../../local/kubelet-stand-in/engine-pid-file.js';
import { request } from '../../helpers/gateway/http-request.js';
import { ENGINE_START_MS, until, useKubeletStandIn } from '../../helpers/local/kubelet-stand-in-suite.js';
import { CONFIG_VOLUME, couchContainer, NAME } from '../../helpers/local/stand-in-statefulset.js';

/**
 * The kubelet stand-in when a container fails, as a kubelet: restarts by the restart policy and
 * CrashLoopBackOff, a start whose record cannot be written, an image it cannot run, a startup
 * probe's budget. A pod's life and its volume's are kubelet-stand-in.test.ts.
 */
describe('the kubelet stand-in, when a container fails', () => {
  const suite = useKubeletStandIn();
  const { readPod, readyPod, scale } = suite;

  beforeAll(() => suite.createStatefulSet(1));

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
      (await suite.core().listNamespacedEvent({ namespace: suite.namespace })).items.filter(
        (e) => e.reason === 'BackOff' && e.involvedObject.name === before.metadata?.name,
      ).length;
    const after = await crash(1);
    expect(after.status?.containerStatuses?.[0]?.lastState?.terminated).toMatchObject({ reason: 'Error' });
    expect(after.status?.podIP).toBe(ip);
    // The first crash of a pod is restarted at once: no back-off, as a kubelet's first restart.
    expect(await backOffEvents()).toBe(0);
    await crash(2);
    expect(await backOffEvents()).toBeGreaterThan(0);
  }, 150_000);

  it("when the engine's record cannot be written in its volume, then the start fails and the engine it started is stopped, not left serving beside the next one", async () => {
    const core = suite.core();
    const pod = await readyPod();
    const ip = pod.status?.podIP ?? '';
    const claim = await core.readNamespacedPersistentVolumeClaim({
      name: `data-${NAME}-0`,
      namespace: suite.namespace,
    });
    // A folder where the record goes: its write fails (EISDIR) as on a full disk; the engine runs.
    const record = path.join(suite.dataRoot, claim.spec?.volumeName ?? '', ENGINE_PID_FILE);
    await fs.rm(record, { force: true });
    await fs.mkdir(record);
    process.kill(listeningPid(ip), 'SIGKILL');
    await until(
      'the Failed Event of the restart',
      async () =>
        (await core.listNamespacedEvent({ namespace: suite.namespace })).items.some(
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
    const core = suite.core();
    await core.createNamespacedPod({
      namespace: suite.namespace,
      body: { metadata: { name: 'other' }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } },
    });
    const waiting = await until('the nginx pod waiting', async () => {
      const pod = await core.readNamespacedPod({ name: 'other', namespace: suite.namespace });
      return pod.status?.containerStatuses?.[0]?.state?.waiting;
    });
    expect(waiting.reason).toBe('ImageNotRunnableLocally');
    expect(waiting.message).toContain('nginx:1.27');
    await core.deleteNamespacedPod({ name: 'other', namespace: suite.namespace });
    await until('the nginx pod gone', () =>
      core.readNamespacedPod({ name: 'other', namespace: suite.namespace }).then(
        () => undefined,
        () => true,
      ),
    );
  });

  it("when a pod's startup probe allows less time than the engine's boot, then it is killed and restarted as a kubelet would; with the operator's probes the same engine starts on its first run", async () => {
    const core = suite.core();
    const pod = (name: string, probes: Partial<V1Container>): V1Pod => ({
      metadata: { name },
      spec: {
        containers: [couchContainer(probes)],
        volumes: [CONFIG_VOLUME, { name: 'data', emptyDir: {} }],
      },
    });
    const container = (name: string) =>
      core
        .readNamespacedPod({ name, namespace: suite.namespace })
        .then((current) => current.status?.containerStatuses?.[0]);
    const tight = { ...COUCHDB_PROBES.startupProbe, failureThreshold: 1 };
    // One failure allowed, and the first probe runs as the container starts: no engine answers then.
    await core.createNamespacedPod({
      namespace: suite.namespace,
      body: pod('tight', { startupProbe: tight }),
    });
    await core.createNamespacedPod({ namespace: suite.namespace, body: pod('operator', COUCHDB_PROBES) });
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
        namespace: suite.namespace,
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
          core.deleteNamespacedPod({ name, namespace: suite.namespace, gracePeriodSeconds: 0 }),
        ),
      );
    }
  }, 150_000);

  it("when the engine never answers on its container's port, then its startup probe kills it on the kubelet's schedule, not after a wait of the stand-in's own", async () => {
    const core = suite.core();
    const name = 'elsewhere';
    // The engine listens on another port than the container's, so every probe of 5984 is refused.
    await core.createNamespacedConfigMap({
      namespace: suite.namespace,
      body: {
        metadata: { name: `${name}-port`, labels: { [LABEL_INSTANCE]: name } },
        data: { 'zz-port.ini': '[chttpd]\nport = 5985\n' },
      },
    });
    const startupProbe = { ...COUCHDB_PROBES.startupProbe, failureThreshold: 3 };
    const started = Date.now();
    await core.createNamespacedPod({
      namespace: suite.namespace,
      body: {
        metadata: { name },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [couchContainer({ startupProbe })],
          volumes: [
            {
              name: 'config',
              projected: {
                sources: [
                  ...(CONFIG_VOLUME.projected?.sources ?? []),
                  { configMap: { name: `${name}-port` } },
                ],
              },
            },
            { name: 'data', emptyDir: {} },
          ],
        },
      },
    });
    try {
      // Three failures a second apart: killed about 2 s after the start. The stand-in used to wait
      // for /_up itself first, up to its own 60 s, before any probe ran.
      const restarted = await until(
        'the pod restarted by its startup probe',
        async () => {
          const pod = await core.readNamespacedPod({ name, namespace: suite.namespace });
          return (pod.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1 ? pod : undefined;
        },
        30_000,
      );
      expect(restarted.status?.containerStatuses?.[0]?.started).not.toBe(true);
      expect(Date.now() - started).toBeLessThan(30_000);
      const events = await core.listNamespacedEvent({
        namespace: suite.namespace,
        fieldSelector: `involvedObject.name=${name}`,
      });
      expect(events.items.map((event) => event.message)).toContainEqual(
        expect.stringMatching(/^Startup probe failed: /),
      );
    } finally {
      await core.deleteNamespacedPod({ name, namespace: suite.namespace, gracePeriodSeconds: 0 });
    }
  }, 60_000);
});
