import { PatchStrategy, setHeaderOptions, type CustomObjectsApi } from '@kubernetes/client-node';
import { LABEL_INSTANCE, SETTEE_GROUP, SETTEE_VERSION } from '../../../api/contract.js';
import { COUCH_BACKUP_PLURAL, LABEL_BACKUP_TRIGGER, type CouchBackup } from '../../../api/couch-backup.js';
import type { CouchInstance } from '../../../api/couch-instance.js';
import { callKube, isNotFound } from '../../../kube/errors.js';
import { buildOwnerReference } from '../../resources/owner-reference.js';

const api = (namespace: string) => ({
  group: SETTEE_GROUP,
  version: SETTEE_VERSION,
  plural: COUCH_BACKUP_PLURAL,
  namespace,
});

/**
 * A backup made by hand gets its instance as owner and the instance label, as the operator's own
 * have from the start: deleted with the instance, listed with `-l settee.dev/instance=<name>`.
 * Returns the backup as stored (the same object when there was nothing to do).
 */
export async function adoptBackup(
  customObjects: CustomObjectsApi,
  backup: CouchBackup,
  instance: CouchInstance,
): Promise<CouchBackup> {
  if (backup.metadata.ownerReferences?.some((ref) => ref.uid === instance.metadata.uid)) return backup;
  return (await callKube(() =>
    customObjects.patchNamespacedCustomObject(
      {
        ...api(instance.metadata.namespace ?? ''),
        name: backup.metadata.name ?? '',
        body: {
          metadata: {
            labels: {
              [LABEL_INSTANCE]: instance.metadata.name ?? '',
              [LABEL_BACKUP_TRIGGER]: backup.spec.trigger ?? 'Manual',
            },
            ownerReferences: [
              ...(backup.metadata.ownerReferences ?? []),
              { ...buildOwnerReference(instance), controller: false },
            ],
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    ),
  )) as CouchBackup;
}

/**
 * Whether the API server, not the cache, still says Running: a cache that lags behind this
 * process's own writes must not get a backup marked as cut off. One read, on that rare path only.
 */
export async function isStillRunning(customObjects: CustomObjectsApi, backup: CouchBackup): Promise<boolean> {
  try {
    const live = (await callKube(() =>
      customObjects.getNamespacedCustomObject({
        ...api(backup.metadata.namespace ?? ''),
        name: backup.metadata.name ?? '',
      }),
    )) as CouchBackup;
    return live.status?.phase === 'Running';
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/** Deletes a CouchBackup object (what it stored is deleted first, by the caller). */
export async function deleteBackup(
  customObjects: CustomObjectsApi,
  namespace: string,
  name: string,
): Promise<void> {
  await callKube(() => customObjects.deleteNamespacedCustomObject({ ...api(namespace), name }));
}
