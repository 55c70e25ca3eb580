import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { SETTEE_GROUP, SETTEE_VERSION } from '../../api/contract.js';
import { COUCH_INSTANCE_PLURAL, type CouchInstance } from '../../api/couch-instance.js';

export interface InstanceWatch {
  /** When each instance first met the condition (epoch ms), once `count` have. */
  reached: Promise<Map<string, number>>;
  /** How many have met the condition so far. */
  progress(): number;
  stop(): void;
}

/**
 * Watches the CouchInstances of `namespace` and notes when each first meets `condition`: a watch
 * rather than polling, so the time is when the API server had it, not when a poll came round.
 * A watch the API server ends early (it closes a watcher that falls behind, as it may under
 * hundreds of status writes on a loaded machine) is started again without a resourceVersion, which
 * replays every instance as it is: one that met the condition meanwhile is noted then, late by the
 * gap at most.
 */
export async function watchInstancesReaching(
  kubeConfig: KubeConfig,
  namespace: string,
  count: number,
  condition: (instance: CouchInstance) => boolean,
): Promise<InstanceWatch> {
  const reachedAt = new Map<string, number>();
  let resolve!: (value: Map<string, number>) => void;
  let reject!: (err: unknown) => void;
  const reached = new Promise<Map<string, number>>((res, rej) => ((resolve = res), (reject = rej)));
  let stopped = false;
  let restarts = 0;
  let controller: AbortController | undefined;
  const start = async (): Promise<void> => {
    controller = await new Watch(kubeConfig).watch(
      `/apis/${SETTEE_GROUP}/${SETTEE_VERSION}/namespaces/${namespace}/${COUCH_INSTANCE_PLURAL}`,
      {},
      (_type, object: CouchInstance) => {
        const name = object.metadata.name ?? '';
        if (condition(object) && !reachedAt.has(name)) reachedAt.set(name, Date.now());
        if (reachedAt.size === count) resolve(reachedAt);
      },
      (err: unknown) => {
        if (stopped || reachedAt.size === count) return;
        if (++restarts > 20) return reject(err ?? new Error('the watch kept ending early'));
        start().catch(reject);
      },
    );
  };
  await start();
  return {
    reached,
    progress: () => reachedAt.size,
    stop: () => {
      stopped = true;
      controller?.abort();
    },
  };
}
