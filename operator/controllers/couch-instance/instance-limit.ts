import type { CouchInstance } from '../../../api/couch-instance.js';

export interface InstanceLimitInput {
  instance: CouchInstance;
  /** Every CouchInstance of its namespace (the informer's cache), itself included or not. */
  namespaceInstances: readonly CouchInstance[];
  /** Whether an instance already has its StatefulSet (was provisioned); by name. */
  isProvisioned: (name: string) => boolean;
  /** SETTEE_FREE_INSTANCES_PER_NAMESPACE. */
  limit: number;
}

const isFree = (instance: CouchInstance): boolean => instance.spec.plan !== 'paid';

const createdAt = (instance: CouchInstance): number => {
  const time = instance.metadata.creationTimestamp as Date | string | undefined;
  return time === undefined ? Infinity : new Date(time).getTime();
};

/** Older first; the name breaks ties within the second the API server stamps. */
function isAhead(other: CouchInstance, ofCreatedAt: number, ofName: string): boolean {
  const a = createdAt(other);
  return a < ofCreatedAt || (a === ofCreatedAt && (other.metadata.name ?? '') < ofName);
}

/**
 * Whether a free instance is past its namespace's free-instance limit, pure: the message to report
 * when it is, else undefined. The operator's half of the limit, for namespaces without the chart's
 * ResourceQuota (which makes the API server refuse the create itself). The free instances that
 * already run (have a StatefulSet) and the older ones waiting come first; an instance already
 * provisioned is never refused afterwards, whatever happened to the others (its data stays served).
 * Paid instances neither count nor are limited.
 */
export function findInstanceLimitExcess(input: InstanceLimitInput): string | undefined {
  const { instance, limit } = input;
  const name = instance.metadata.name ?? '';
  if (!isFree(instance) || input.isProvisioned(name)) return undefined;
  // Fewer instances than the limit, itself included, cannot put it past the limit. Without this
  // every unprovisioned instance's reconcile walked the whole namespace: 2,000 applied at once
  // cost 2,000 x 2,000 checks.
  if (input.namespaceInstances.length <= limit) return undefined;
  const mine = createdAt(instance);
  const ahead = input.namespaceInstances.filter(
    (other) =>
      other.metadata.name !== name &&
      other.metadata.deletionTimestamp === undefined &&
      isFree(other) &&
      (input.isProvisioned(other.metadata.name ?? '') || isAhead(other, mine, name)),
  );
  if (ahead.length < limit) return undefined;
  return (
    `namespace ${instance.metadata.namespace ?? ''} already has ${ahead.length} free instances, the free ` +
    `limit is ${limit}: delete one or move one to plan: paid (this one is created once there is room)`
  );
}
