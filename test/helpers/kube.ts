import crypto from 'node:crypto';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { CONTROL_PLANES_ENV, type TestControlPlaneInfo } from './control-plane-env.js';

/** This jest worker's control plane, started by global-setup. */
export function testControlPlane(): TestControlPlaneInfo & { kubeConfig: KubeConfig } {
  const planes = JSON.parse(process.env[CONTROL_PLANES_ENV] ?? '[]') as TestControlPlaneInfo[];
  const worker = Number(process.env.JEST_WORKER_ID ?? '1');
  const plane = planes[(worker - 1) % Math.max(planes.length, 1)];
  if (!plane)
    throw new Error(`${CONTROL_PLANES_ENV} is not set: run the suite through jest (global-setup starts it)`);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(plane.kubeconfigPath);
  return { ...plane, kubeConfig };
}

/**
 * Creates a namespace of its own for a suite and deletes it in the suite's afterAll, so suites that
 * share a control plane never see each other's objects.
 */
export function useTestNamespace(prefix: string): { readonly name: string } {
  const ref = { name: '' };
  beforeAll(async () => {
    const core = testControlPlane().kubeConfig.makeApiClient(CoreV1Api);
    ref.name = `${prefix}-${crypto.randomBytes(3).toString('hex')}`.slice(0, 63);
    await core.createNamespace({ body: { metadata: { name: ref.name } } });
  });
  afterAll(async () => {
    if (!ref.name) return;
    const core = testControlPlane().kubeConfig.makeApiClient(CoreV1Api);
    await core.deleteNamespace({ name: ref.name }).catch(() => undefined);
  });
  return ref;
}
