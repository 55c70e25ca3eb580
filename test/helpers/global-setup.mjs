// Starts one real control plane per jest worker, before the workers start, and hands each worker
// its own through the environment (test/helpers/kube.ts picks it by JEST_WORKER_ID). Suites share
// their worker's control plane and isolate themselves by namespace. Each control plane gets the
// kubelet stand-in's nodes (TEST_NODES): Node objects kept Ready by their Leases, as kubelets would.
//
// Plain ESM because jest loads global setup outside its module transform; tsx imports the
// TypeScript sources for it.
import { tsImport } from 'tsx/esm/api';

const KEY = Symbol.for('settee.test.controlPlanes');

export default async function globalSetup(globalConfig) {
  const { startControlPlane } = await tsImport('../../local/control-plane.ts', import.meta.url);
  const { startNodeAgent } = await tsImport('../../local/kubelet-stand-in/node-agent.ts', import.meta.url);
  const { createSilentLogger } = await tsImport('../../observability/logger.ts', import.meta.url);
  const { CONTROL_PLANES_ENV, TEST_NODES } = await tsImport('./control-plane-env.ts', import.meta.url);
  const { describeCouchEngine, locateCouchDbRelease, COUCHDB_RELEASE_ENV } = await tsImport(
    '../../local/couch-engine/couchdb-release.ts',
    import.meta.url,
  );
  // Located (and unpacked, if make deps did not) once here; the workers inherit the folder.
  const release = locateCouchDbRelease();
  if (release) process.env[COUCHDB_RELEASE_ENV] = release.root;
  // The totals reporter repeats it beside the totals.
  process.env.SETTEE_TEST_COUCH_ENGINE = describeCouchEngine();
  process.stderr.write(`\n[settee] ${process.env.SETTEE_TEST_COUCH_ENGINE}\n`);
  const workers = globalConfig.runInBand ? 1 : Math.max(1, globalConfig.maxWorkers);
  const started = Date.now();
  process.stderr.write(
    `\n[settee] starting ${workers} control plane(s) (etcd, kube-apiserver, kube-controller-manager, kube-scheduler)\n`,
  );
  const planes = await Promise.all(
    Array.from({ length: workers }, async () => {
      const plane = await startControlPlane();
      const nodes = await startNodeAgent({
        kubeConfig: plane.kubeConfig,
        nodes: TEST_NODES,
        logger: createSilentLogger(),
      });
      return { plane, nodes };
    }),
  );
  process.stderr.write(`[settee] control plane(s) ready in ${Date.now() - started} ms\n`);
  process.env[CONTROL_PLANES_ENV] = JSON.stringify(
    planes.map(({ plane }) => ({
      server: plane.server,
      kubeconfigPath: plane.kubeconfigPath,
      kubectl: plane.tools.kubectl,
      helm: plane.tools.helm,
    })),
  );
  // globalSetup and globalTeardown run in the same process; the handles pass through globalThis.
  globalThis[KEY] = planes;
  const stopAll = () =>
    void Promise.all(
      planes.map(async ({ plane, nodes }) => (await nodes.stop(), await plane.stop())),
    ).finally(() => process.exit(130));
  process.once('SIGINT', stopAll);
  process.once('SIGTERM', stopAll);
}
