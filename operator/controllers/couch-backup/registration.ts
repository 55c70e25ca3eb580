import type { V1Pod, V1Secret } from '@kubernetes/client-node';
import type { CouchBackup } from '../../../api/couch-backup.js';
import type { CouchInstance } from '../../../api/couch-instance.js';
import { COUCH_OWNED_SELECTOR } from '../../../api/well-known.js';
import type { InformerFactory } from '../../../kube/informer-factory.js';
import { ownKey } from '../../../kube/controller-runtime/key-mappers.js';
import { objectKey } from '../../../kube/controller-runtime/object-key.js';
import { isSpecOrMetadataChange } from '../../../kube/controller-runtime/predicates.js';
import { COUCH_BACKUP_RESOURCE, COUCH_INSTANCE_RESOURCE } from '../couch-instance/registration.js';
import type { ControllerRegistration } from '../registration.js';
import { BackupMetrics } from './metrics.js';
import { CouchBackupReconciler, type CouchBackupInformers } from './reconciler.js';

export function couchBackupInformers(informers: InformerFactory): CouchBackupInformers {
  return {
    backups: informers.informerFor<CouchBackup>(COUCH_BACKUP_RESOURCE),
    instances: informers.informerFor<CouchInstance>(COUCH_INSTANCE_RESOURCE),
    secrets: informers.informerFor<V1Secret>({
      apiVersion: 'v1',
      kind: 'Secret',
      plural: 'secrets',
      labelSelector: COUCH_OWNED_SELECTOR,
    }),
    pods: informers.informerFor<V1Pod>({
      apiVersion: 'v1',
      kind: 'Pod',
      plural: 'pods',
      labelSelector: COUCH_OWNED_SELECTOR,
    }),
  };
}

/**
 * Runs CouchBackups. Watches its own kind (spec and metadata changes; its status writes are its
 * own), and instances: a change of an instance (it woke, it became paid) looks again at the
 * backups of it that wait.
 */
export const couchBackupController: ControllerRegistration = {
  name: 'couch-backup',
  create({ informers, clients, events, config, metricsRegistry }) {
    const watched = couchBackupInformers(informers);
    const waitingBackupsOf = (instance: CouchInstance) =>
      watched.backups
        .list(instance.metadata.namespace)
        .filter((backup) => backup.spec.instance === instance.metadata.name && !backup.status?.completedAt)
        .map((backup) =>
          objectKey({ namespace: backup.metadata.namespace, name: backup.metadata.name ?? '' }),
        );
    const metrics = new BackupMetrics(metricsRegistry);
    // The per-instance gauges stay bounded by the instances that exist.
    watched.instances.onEvent((event) => {
      if (event.type === 'delete')
        metrics.forgetInstance(
          objectKey({ namespace: event.object.metadata.namespace, name: event.object.metadata.name ?? '' }),
        );
    });
    return {
      reconciler: new CouchBackupReconciler({
        informers: watched,
        clients,
        events,
        config: config.backups,
        metrics,
      }),
      primary: watched.backups,
      watches: [
        { informer: watched.backups, toKeys: ownKey, updatePredicate: isSpecOrMetadataChange },
        { informer: watched.instances, toKeys: waitingBackupsOf },
      ],
    };
  },
};
