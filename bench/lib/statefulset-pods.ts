import { AppsV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { waitFor } from '../../local/wait.js';
import { countOf } from './convergence-timeline.js';
import { sumOverPages } from './paged-list.js';

/**
 * Waits until the namespace holds every pod its StatefulSets ask for (the sum of their replicas),
 * polling with a deadline, and resolves with that count. Converged instances are not yet pods:
 * the StatefulSet controller makes them behind its own client limit, so at 2,000 a phase started
 * right after convergence ran while 1,226 pods were still being made and measured that traffic too.
 */
export async function waitForStatefulSetPods(options: {
  kubeConfig: KubeConfig;
  namespace: string;
  timeoutMs: number;
  /** Told of the count every `progressMs` while it is short. */
  log: (line: string) => void;
  progressMs?: number;
}): Promise<number> {
  const { kubeConfig, namespace } = options;
  const apps = kubeConfig.makeApiClient(AppsV1Api);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const wanted = await sumOverPages(
    (page) => apps.listNamespacedStatefulSet({ namespace, ...page }),
    (set) => set.spec?.replicas ?? 1,
  );
  let toldAt = Date.now();
  return waitFor(
    `the ${wanted} pods of the StatefulSets in ${namespace}`,
    async () => {
      // One item asked for: the answer counts the rest (remainingItemCount) without sending them.
      const pods = countOf(await core.listNamespacedPod({ namespace, limit: 1 }));
      if (pods >= wanted) return pods;
      if (Date.now() - toldAt >= (options.progressMs ?? 30_000)) {
        options.log(`${pods} of ${wanted} pods made`);
        toldAt = Date.now();
      }
      return undefined;
    },
    { timeoutMs: options.timeoutMs, intervalMs: 1_000 },
  );
}
