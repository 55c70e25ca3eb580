import type {
  KubernetesObject,
  V1ConfigMap,
  V1Lease,
  V1Pod,
  V1Secret,
  V1Service,
  V1StatefulSet,
} from '@kubernetes/client-node';
import { LABEL_INSTANCE, SETTEE_API_VERSION } from '../../../api/contract.js';
import {
  COUCH_INSTANCE_KIND,
  COUCH_INSTANCE_PLURAL,
  type CouchInstance,
} from '../../../api/couch-instance.js';
import { unschedulableMessage } from '../../../api/pod-scheduling.js';
import { COUCH_OWNED_SELECTOR } from '../../../api/well-known.js';
import type { InformerFactory } from '../../../kube/informer-factory.js';
import type { WatchedResource } from '../../../kube/resource-path.js';
import type { ControllerRegistration } from '../registration.js';
import { COUCH_BACKUP_KIND, COUCH_BACKUP_PLURAL, type CouchBackup } from '../../../api/couch-backup.js';
import { ownerKeys, ownKey } from '../../../kube/controller-runtime/key-mappers.js';
import { isSpecOrMetadataChange } from '../../../kube/controller-runtime/predicates.js';
import type { Informer } from '../../../kube/informer.js';
import { CouchInstanceMetrics } from './metrics.js';
import { CouchInstanceReconciler, type CouchInstanceInformers } from './reconciler.js';

export const COUCH_INSTANCE_RESOURCE: WatchedResource = {
  apiVersion: SETTEE_API_VERSION,
  kind: COUCH_INSTANCE_KIND,
  plural: COUCH_INSTANCE_PLURAL,
};

/** Backups: run by the couch-backup controller, and watched here for the final backup before hibernating. */
export const COUCH_BACKUP_RESOURCE: WatchedResource = {
  apiVersion: SETTEE_API_VERSION,
  kind: COUCH_BACKUP_KIND,
  plural: COUCH_BACKUP_PLURAL,
};

/** Owned kinds are watched through the labels Settee puts on them, never cluster-wide. */
const owned = (apiVersion: string, kind: string, plural: string): WatchedResource => ({
  apiVersion,
  kind,
  plural,
  labelSelector: COUCH_OWNED_SELECTOR,
});

export function couchInstanceInformers(informers: InformerFactory): CouchInstanceInformers {
  return {
    instances: informers.informerFor<CouchInstance>(COUCH_INSTANCE_RESOURCE),
    statefulSets: informers.informerFor<V1StatefulSet>(owned('apps/v1', 'StatefulSet', 'statefulsets')),
    services: informers.informerFor<V1Service>(owned('v1', 'Service', 'services')),
    configMaps: informers.informerFor<V1ConfigMap>(owned('v1', 'ConfigMap', 'configmaps')),
    secrets: informers.informerFor<V1Secret>(owned('v1', 'Secret', 'secrets')),
    // The gateway's activity Leases carry the instance's name in LABEL_INSTANCE and no owner reference.
    leases: informers.informerFor<V1Lease>({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      plural: 'leases',
      labelSelector: LABEL_INSTANCE,
    }),
    // The pods carry the owned labels from the pod template (their owner is the StatefulSet).
    pods: informers.informerFor<V1Pod>(owned('v1', 'Pod', 'pods')),
    backups: informers.informerFor<CouchBackup>(COUCH_BACKUP_RESOURCE),
  };
}

/**
 * The watch graph: an instance's own changes (spec, labels, annotations such as the wake request;
 * not its status), any change to an object it owns, and each renewal of its activity Lease all
 * become the instance's key. Of pods only the scheduler's verdict does (the StatefulSet's status
 * tells of the rest).
 */
const isSchedulingChange = (previous: V1Pod | undefined, current: V1Pod): boolean =>
  unschedulableMessage(previous) !== unschedulableMessage(current);

/**
 * Of its StatefulSet's status the instance reads replicas and readyReplicas: the StatefulSet
 * controller's other status writes (observedGeneration, revisions, current, updated and available
 * counts; two or three per start) wake nothing. Changes to the spec or metadata always do.
 */
const isReadStatefulSetChange = (previous: V1StatefulSet | undefined, current: V1StatefulSet): boolean =>
  isSpecOrMetadataChange(previous, current) ||
  previous?.status?.replicas !== current.status?.replicas ||
  previous?.status?.readyReplicas !== current.status?.readyReplicas;

export const couchInstanceController: ControllerRegistration = {
  name: 'couch-instance',
  create({ informers, clients, events, config, logger, metricsRegistry }) {
    const watched = couchInstanceInformers(informers);
    const toOwner = ownerKeys({ apiVersion: SETTEE_API_VERSION, kind: COUCH_INSTANCE_KIND });
    const reconciler = new CouchInstanceReconciler({
      informers: watched,
      clients,
      events,
      config: config.couchInstance,
      metrics: new CouchInstanceMetrics(metricsRegistry),
      backups: config.backups,
      logger,
    });
    /** The objects the reconciler writes: its own writes' events wake nothing (WatchSource.isOwnWrite). */
    const written = <T extends KubernetesObject>(informer: Informer<T>) =>
      reconciler.watchWritten(informer, toOwner);
    return {
      reconciler,
      primary: watched.instances,
      workers: config.controllers.instanceWorkers,
      watches: [
        { informer: watched.instances, toKeys: ownKey, updatePredicate: isSpecOrMetadataChange },
        { ...written(watched.statefulSets), updatePredicate: isReadStatefulSetChange },
        written(watched.services),
        written(watched.configMaps),
        written(watched.secrets),
        { informer: watched.leases, toKeys: toOwner },
        // The StatefulSet's status does not change when the scheduler gives up on its pod.
        { informer: watched.pods, toKeys: toOwner, updatePredicate: isSchedulingChange },
        // A final backup's end lets the instance it holds up hibernate.
        { informer: watched.backups, toKeys: toOwner },
      ],
    };
  },
};
