import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { SETTEE_GROUP, SETTEE_VERSION } from '../../api/contract.js';
import { COUCH_INSTANCE_PLURAL, type CouchInstance } from '../../api/couch-instance.js';

export interface InstanceWatch {
  /** When each instance first met the condition (epoch ms), once `count` have. */
  reached: Promise<Map<string, number>>;
  stop(): void;
}

/**
 * Watches the CouchInstances of `namespace` and notes when each first meets `condition`: a watch
 * rather than polling, so the time is when the API server had it, not when a poll came round.
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
  const controller = await new Watch(kubeConfig).watch(
    `/apis/${SETTEE_GROUP}/${SETTEE_VERSION}/namespaces/${namespace}/${COUCH_INSTANCE_PLURAL}`,
    {},
    (_type, object: CouchInstance) => {
      const name = object.metadata.name ?? '';
      if (condition(object) && !reachedAt.has(name)) reachedAt.set(name, Date.now());
      if (reachedAt.size === count) resolve(reachedAt);
    },
    (err: unknown) =>
      reachedAt.size === count ? undefined : reject(err ?? new Error('the watch ended early')),
  );
  return { reached, stop: () => controller.abort() };
}
