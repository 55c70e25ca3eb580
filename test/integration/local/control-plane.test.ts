import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import {
  ApiextensionsV1Api,
  CoreV1Api,
  DiscoveryV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1Pod,
} from '@kubernetes/client-node';
import { DEFAULT_CRD_DIR, startControlPlane } from '../../../local/control-plane.js';
import { UNSERVED_API_GROUPS } from '../../../local/kube-apiserver.js';
import { loadManifests } from '../../../local/manifests.js';
import { isProcessAlive } from '../../../local/process.js';
import { waitFor } from '../../../local/wait.js';
import { TEST_NODES } from '../../helpers/control-plane-env.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';

// ps shows a command's first 15 characters: kube-controller-manager is "kube-controller".
const CONTROL_PLANE_COMMANDS = ['etcd', 'kube-apiserver', 'kube-controller', 'kube-scheduler'];

/** Pids of this process's control plane children. */
function controlPlanePids(): number[] {
  const out = execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', String(process.pid)]).toString();
  return out
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([, comm]) => CONTROL_PLANE_COMMANDS.includes(comm ?? ''))
    .map(([pid]) => Number(pid));
}

/** Runs `run` with `vars` set (undefined: unset) in this process's environment, then restores it. */
async function withEnv<T>(vars: Record<string, string | undefined>, run: () => Promise<T>): Promise<T> {
  const assign = (values: Record<string, string | undefined>): void => {
    for (const [name, value] of Object.entries(values))
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  };
  const saved = Object.fromEntries(Object.keys(vars).map((name) => [name, process.env[name]]));
  assign(vars);
  try {
    return await run();
  } finally {
    assign(saved);
  }
}

describe('the embedded control plane', () => {
  it('when the shared control plane is used, then kubectl answers with the admin kubeconfig', () => {
    const plane = testControlPlane();
    const out = execFileSync(plane.kubectl, [
      '--kubeconfig',
      plane.kubeconfigPath,
      'get',
      '--raw',
      '/readyz',
    ]);
    expect(out.toString().trim()).toBe('ok');
  });

  it('when its API groups are listed, then those nothing of Settee uses are not served and every one Settee and its chart use is', () => {
    const plane = testControlPlane();
    const discovery = JSON.parse(
      execFileSync(plane.kubectl, ['--kubeconfig', plane.kubeconfigPath, 'get', '--raw', '/apis']).toString(),
    ) as { groups: Array<{ versions: Array<{ groupVersion: string }> }> };
    const served = discovery.groups.flatMap((g) => g.versions.map((v) => v.groupVersion));
    for (const unserved of UNSERVED_API_GROUPS) expect(served).not.toContain(unserved);
    expect(served).toEqual(
      expect.arrayContaining([
        'apps/v1',
        'coordination.k8s.io/v1',
        'rbac.authorization.k8s.io/v1',
        'storage.k8s.io/v1',
        'admissionregistration.k8s.io/v1',
        'apiextensions.k8s.io/v1',
        'authentication.k8s.io/v1',
        'authorization.k8s.io/v1',
        'networking.k8s.io/v1',
        'policy/v1',
        'autoscaling/v1',
        'autoscaling/v2',
        'events.k8s.io/v1',
        'discovery.k8s.io/v1',
        'settee.dev/v1alpha1',
      ]),
    );
  });

  it('when every CRD in crds/ is installed, then each one is Established', async () => {
    const expected = (await loadManifests(DEFAULT_CRD_DIR)).filter(
      (o) => o.kind === 'CustomResourceDefinition',
    );
    expect(expected.length).toBeGreaterThan(0);
    const api = testControlPlane().kubeConfig.makeApiClient(ApiextensionsV1Api);
    for (const crd of expected) {
      const stored = await api.readCustomResourceDefinition({ name: crd.metadata?.name ?? '' });
      expect(stored.status?.conditions).toEqual(
        expect.arrayContaining([expect.objectContaining({ type: 'Established', status: 'True' })]),
      );
    }
  });

  it('when a fresh one starts, then a namespace can be created and deleted, its API server runs the Go default GC unless KUBE_APISERVER_GOGC is set, takes apiserverArgs after its own flags, and stop leaves no process and no data', async () => {
    const apiserverGogc = (): string[] => {
      const pid = plane.running().find((p) => p.name === 'kube-apiserver')?.pid;
      const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      return environ.filter((entry) => entry.startsWith('GOGC='));
    };
    const before = new Set(controlPlanePids());
    // A GOGC the control plane inherits does not reach its API server.
    const plane = await withEnv({ GOGC: '300', KUBE_APISERVER_GOGC: undefined }, () =>
      startControlPlane({ apiserverArgs: ['--runtime-config=batch/v1=true'] }),
    );
    const started = controlPlanePids().filter((pid) => !before.has(pid));
    try {
      expect(started.length).toBe(4); // etcd, kube-apiserver, kube-controller-manager, kube-scheduler
      expect(apiserverGogc()).toEqual([]);
      // A later value wins: the bench's variant that serves a group the platform turns off.
      const discovery = execFileSync(plane.tools.kubectl, [
        '--kubeconfig',
        plane.kubeconfigPath,
        'get',
        '--raw',
        '/apis/batch',
      ]).toString();
      expect(JSON.parse(discovery)).toMatchObject({ preferredVersion: { groupVersion: 'batch/v1' } });
      const core = plane.kubeConfig.makeApiClient(CoreV1Api);
      await core.createNamespace({ body: { metadata: { name: 'settee-probe' } } });
      const ns = await core.readNamespace({ name: 'settee-probe' });
      expect(ns.status?.phase).toBe('Active');
      await core.createNamespacedConfigMap({
        namespace: 'settee-probe',
        body: { metadata: { name: 'left' } },
      });
      await core.deleteNamespace({ name: 'settee-probe' });
      // The namespace controller empties it and finalizes it: deletion completes.
      await waitFor(
        'namespace settee-probe to be gone',
        () =>
          core.readNamespace({ name: 'settee-probe' }).then(
            () => undefined,
            () => true,
          ),
        { timeoutMs: 45_000, intervalMs: 250 },
      );
      // The variable is read at each start: the API server started again by an outage has it.
      await withEnv({ KUBE_APISERVER_GOGC: '250' }, () => plane.outage('kube-apiserver', 0));
      started.push(...plane.running().map((p) => p.pid));
      expect(apiserverGogc()).toEqual(['GOGC=250']);
    } finally {
      await plane.stop();
    }
    expect(started.filter(isProcessAlive)).toEqual([]);
    expect(fs.existsSync(plane.kubeconfigPath)).toBe(false);
  });

  describe('with its controllers and scheduler', () => {
    const namespace = useTestNamespace('controllers');

    it('when an owner is deleted, then the garbage collector deletes what it owns', async () => {
      const core = testControlPlane().kubeConfig.makeApiClient(CoreV1Api);
      const owner = await core.createNamespacedConfigMap({
        namespace: namespace.name,
        body: { metadata: { name: 'owner' } },
      });
      const ownerReference = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'owner',
        uid: owner.metadata?.uid ?? '',
      };
      await core.createNamespacedConfigMap({
        namespace: namespace.name,
        body: { metadata: { name: 'owned', ownerReferences: [ownerReference] } },
      });
      await core.deleteNamespacedConfigMap({ name: 'owner', namespace: namespace.name });
      await waitFor(
        'the owned ConfigMap to be collected',
        () =>
          core.readNamespacedConfigMap({ name: 'owned', namespace: namespace.name }).then(
            () => undefined,
            () => true,
          ),
        { timeoutMs: 30_000, intervalMs: 250 },
      );
    });

    it('when a namespace is made, then the service account controller gives it its default ServiceAccount', async () => {
      const core = testControlPlane().kubeConfig.makeApiClient(CoreV1Api);
      const account = await waitFor(
        'the default ServiceAccount',
        () =>
          core
            .readNamespacedServiceAccount({ name: 'default', namespace: namespace.name })
            .catch(() => undefined),
        { timeoutMs: 15_000, intervalMs: 200 },
      );
      expect(account.metadata?.name).toBe('default');
    });

    it('when a pod names no node, then the scheduler binds it to a Ready node of the kubelet stand-in', async () => {
      const core = testControlPlane().kubeConfig.makeApiClient(CoreV1Api);
      const node = await core.readNode({ name: TEST_NODES[0]?.name ?? '' });
      expect(node.status?.conditions).toEqual(
        expect.arrayContaining([expect.objectContaining({ type: 'Ready', status: 'True' })]),
      );
      expect(node.spec?.taints ?? []).toEqual([]);
      const body: V1Pod = {
        metadata: { name: 'scheduled' },
        spec: { containers: [{ name: 'c', image: 'registry.invalid/none:1' }] },
      };
      await core.createNamespacedPod({ namespace: namespace.name, body });
      const bound = await waitFor(
        'the pod to be bound',
        async () => {
          const pod = await core.readNamespacedPod({ name: 'scheduled', namespace: namespace.name });
          return pod.spec?.nodeName ? pod : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 100 },
      );
      expect(TEST_NODES.map((n) => n.name)).toContain(bound.spec?.nodeName);
      await core.deleteNamespacedPod({ name: 'scheduled', namespace: namespace.name, gracePeriodSeconds: 0 });
    });

    it("when a Service selects a ready pod on a loopback address, as the kubelet stand-in's are, then no endpoint controller writes (or retries) Endpoints or EndpointSlices for it", async () => {
      const { kubeConfig } = testControlPlane();
      const core = kubeConfig.makeApiClient(CoreV1Api);
      const labels = { app: 'looped' };
      await core.createNamespacedPod({
        namespace: namespace.name,
        body: {
          metadata: { name: 'looped', labels },
          spec: {
            nodeName: TEST_NODES[0]?.name ?? '',
            containers: [{ name: 'c', image: 'registry.invalid/none:1' }],
          },
        },
      });
      // What the stand-in reports for a running pod: its loopback address, Ready.
      await core.patchNamespacedPodStatus(
        {
          name: 'looped',
          namespace: namespace.name,
          body: {
            status: {
              phase: 'Running',
              podIP: '127.0.7.7',
              podIPs: [{ ip: '127.0.7.7' }],
              conditions: [{ type: 'Ready', status: 'True' }],
            },
          },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await core.createNamespacedService({
        namespace: namespace.name,
        body: { metadata: { name: 'looped' }, spec: { selector: labels, ports: [{ port: 5984 }] } },
      });
      // The endpoint controllers act on a new Service within a second; they used to make its
      // Endpoints and EndpointSlice, then fail every update with a loopback address (422).
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      const discovery = kubeConfig.makeApiClient(DiscoveryV1Api);
      const [endpoints, slices, events] = await Promise.all([
        core.listNamespacedEndpoints({ namespace: namespace.name }),
        discovery.listNamespacedEndpointSlice({ namespace: namespace.name }),
        core.listNamespacedEvent({ namespace: namespace.name }),
      ]);
      expect(endpoints.items.map((item) => item.metadata?.name)).toEqual([]);
      expect(slices.items.map((item) => item.metadata?.name)).toEqual([]);
      expect(events.items.map((event) => event.reason)).not.toContainEqual(
        expect.stringMatching(/^FailedToUpdateEndpoint/),
      );
    });
  });
});
