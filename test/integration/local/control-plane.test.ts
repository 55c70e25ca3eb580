import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { ApiextensionsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { DEFAULT_CRD_DIR, startControlPlane } from '../../../local/control-plane.js';
import { loadManifests } from '../../../local/manifests.js';
import { isProcessAlive } from '../../../local/process.js';
import { testControlPlane } from '../../helpers/kube.js';

/** Pids of this process's etcd and kube-apiserver children. */
function controlPlanePids(): number[] {
  const out = execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', String(process.pid)]).toString();
  return out
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([, comm]) => comm === 'etcd' || comm === 'kube-apiserver')
    .map(([pid]) => Number(pid));
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

  it('when a fresh one starts, then a namespace can be created and deleted, and stop leaves no process and no data', async () => {
    const before = new Set(controlPlanePids());
    const plane = await startControlPlane();
    const started = controlPlanePids().filter((pid) => !before.has(pid));
    try {
      expect(started.length).toBe(2); // etcd and kube-apiserver
      const core = plane.kubeConfig.makeApiClient(CoreV1Api);
      await core.createNamespace({ body: { metadata: { name: 'settee-probe' } } });
      const ns = await core.readNamespace({ name: 'settee-probe' });
      expect(ns.status?.phase).toBe('Active');
      await core.deleteNamespace({ name: 'settee-probe' });
    } finally {
      await plane.stop();
    }
    expect(started.filter(isProcessAlive)).toEqual([]);
    expect(fs.existsSync(plane.kubeconfigPath)).toBe(false);
  });
});
