import type { V1Pod } from '@kubernetes/client-node';
import { LABEL_INSTANCE } from '../../api/contract.js';
import { podAddress, type UpstreamAddress } from '../../api/pod-address.js';
import { unschedulableMessage } from '../../api/pod-scheduling.js';
import type { Informer } from '../../kube/informer.js';
import type { InformerFactory } from '../../kube/informer-factory.js';
import type { WatchedResource } from '../../kube/resource-path.js';
import { objectKey } from '../../kube/controller-runtime/object-key.js';

/** The pods of Settee's instances: every object Settee creates for an instance carries LABEL_INSTANCE. */
export const INSTANCE_POD_RESOURCE: WatchedResource = {
  apiVersion: 'v1',
  kind: 'Pod',
  plural: 'pods',
  labelSelector: LABEL_INSTANCE,
};

export type { UpstreamAddress };

export type AddressListener = (instanceKey: string, address: UpstreamAddress | undefined) => void;

/**
 * The address of each instance's CouchDB, read from its pod: a pod has its IP as soon as it runs,
 * before its readiness probe passes, so the gateway learns the address at once and probes /_up
 * itself. Neither the kubelet's probe period nor the endpoints controller's propagation to
 * EndpointSlices is on the wake path (and the API server refuses loopback addresses in
 * EndpointSlices, which is all the local platform has).
 */
export class EndpointCache {
  private readonly informer: Informer<V1Pod>;
  /** instance key -> pod name -> its address */
  private readonly pods = new Map<string, Map<string, UpstreamAddress>>();
  private readonly chosen = new Map<string, UpstreamAddress>();
  /** instance key -> pod name -> the scheduler's message, for pods it could not place */
  private readonly unschedulable = new Map<string, Map<string, string>>();
  private readonly listeners = new Set<AddressListener>();

  constructor(informers: InformerFactory) {
    this.informer = informers.informerFor<V1Pod>(INSTANCE_POD_RESOURCE);
    this.informer.onEvent((event) => this.apply(event.object, event.type === 'delete'));
  }

  /** The address to send an instance's requests to, if it has one; `instanceKey` is `namespace/name`. */
  addressOf(instanceKey: string): UpstreamAddress | undefined {
    return this.chosen.get(instanceKey);
  }

  /**
   * Why the scheduler cannot place the instance's pod (api/pod-scheduling.ts), while that is all
   * it has: no address to wait for, and none coming without a change to the cluster.
   */
  unschedulableOf(instanceKey: string): string | undefined {
    if (this.chosen.has(instanceKey)) return undefined;
    const messages = this.unschedulable.get(instanceKey);
    return messages ? [...messages.values()][0] : undefined;
  }

  onChange(listener: AddressListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private apply(pod: V1Pod, deleted: boolean): void {
    const instance = pod.metadata?.labels?.[LABEL_INSTANCE];
    const namespace = pod.metadata?.namespace;
    const podName = pod.metadata?.name;
    if (!instance || !namespace || !podName) return;
    const key = objectKey({ namespace, name: instance });
    const byPod = this.pods.get(key) ?? new Map<string, UpstreamAddress>();
    const address = deleted ? undefined : podAddress(pod);
    if (address) byPod.set(podName, address);
    else byPod.delete(podName);
    if (byPod.size === 0) this.pods.delete(key);
    else this.pods.set(key, byPod);
    const schedulingChanged = this.noteScheduling(
      key,
      podName,
      deleted ? undefined : unschedulableMessage(pod),
    );
    this.choose(key, [...byPod.values()], schedulingChanged);
  }

  /** Records the pod's scheduling verdict; true when the instance's changed. */
  private noteScheduling(key: string, podName: string, message: string | undefined): boolean {
    const byPod = this.unschedulable.get(key) ?? new Map<string, string>();
    if (byPod.get(podName) === message) return false;
    if (message === undefined) byPod.delete(podName);
    else byPod.set(podName, message);
    if (byPod.size === 0) this.unschedulable.delete(key);
    else this.unschedulable.set(key, byPod);
    return true;
  }

  private choose(key: string, addresses: UpstreamAddress[], schedulingChanged: boolean): void {
    const sorted = addresses.sort((a, b) => a.origin.localeCompare(b.origin));
    const next = sorted.find((a) => a.ready) ?? sorted[0];
    const previous = this.chosen.get(key);
    const same = previous?.origin === next?.origin && previous?.ready === next?.ready;
    if (same && !schedulingChanged) return;
    if (next) this.chosen.set(key, next);
    else this.chosen.delete(key);
    for (const listener of this.listeners) listener(key, next);
  }
}
