// Starts one real control plane per jest worker, before the workers start, and hands each worker
// its own through the environment (test/helpers/kube.ts picks it by JEST_WORKER_ID). Suites share
// their worker's control plane and isolate themselves by namespace.
//
// Plain ESM because jest loads global setup outside its module transform; tsx imports the
// TypeScript sources for it.
import { tsImport } from 'tsx/esm/api';

const KEY = Symbol.for('settee.test.controlPlanes');

export default async function globalSetup(globalConfig) {
  const { startControlPlane } = await tsImport('../../local/control-plane.ts', import.meta.url);
  const { CONTROL_PLANES_ENV } = await tsImport('./control-plane-env.ts', import.meta.url);
  const workers = globalConfig.runInBand ? 1 : Math.max(1, globalConfig.maxWorkers);
  const started = Date.now();
  process.stderr.write(`\n[settee] starting ${workers} control plane(s) (etcd + kube-apiserver)\n`);
  const planes = await Promise.all(Array.from({ length: workers }, () => startControlPlane()));
  process.stderr.write(`[settee] control plane(s) ready in ${Date.now() - started} ms\n`);
  process.env[CONTROL_PLANES_ENV] = JSON.stringify(
    planes.map((p) => ({
      server: p.server,
      kubeconfigPath: p.kubeconfigPath,
      kubectl: p.tools.kubectl,
      helm: p.tools.helm,
    })),
  );
  // globalSetup and globalTeardown run in the same process; the handles pass through globalThis.
  globalThis[KEY] = planes;
  const stopAll = () => void Promise.all(planes.map((p) => p.stop())).finally(() => process.exit(130));
  process.once('SIGINT', stopAll);
  process.once('SIGTERM', stopAll);
}
