import { PatchStrategy, setHeaderOptions, type CustomObjectsApi } from '@kubernetes/client-node';
import {
  activityLeaseName,
  ANNOTATION_OPEN_STREAMS,
  LABEL_INSTANCE,
  SETTEE_API_VERSION,
} from '../../api/contract.js';
import { COUCH_INSTANCE_KIND } from '../../api/couch-instance.js';
import { callKube } from '../../kube/errors.js';
import { formatMicroTime } from '../../kube/micro-time.js';
import { GATEWAY_FIELD_MANAGER } from '../field-manager.js';
import type { InstanceRef } from '../instance-ref.js';

/** What one renewal says: who served the instance, when, and how many streams stay open. */
export interface ActivityRenewal {
  instance: InstanceRef & { uid?: string | undefined };
  holderIdentity: string;
  renewTime: Date;
  openStreams: number;
}

/** A coordination.k8s.io/v1 Lease as JSON (renewTime must keep its microseconds, see formatMicroTime). */
export interface ActivityLeaseJson {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
    ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string }>;
  };
  spec: { holderIdentity: string; renewTime: string };
}

/** The Lease's identity: name, namespace, the instance label, and its owner when the uid is known. */
export type ActivityLeaseMetadata = Omit<ActivityLeaseJson['metadata'], 'annotations'>;

/**
 * Who the activity Lease belongs to. Owned by the CouchInstance when its uid is known, so deleting
 * the instance removes it. Shared by the renewal and the request-usage writes (gateway/envelope/).
 */
export function buildActivityLeaseMetadata(instance: ActivityRenewal['instance']): ActivityLeaseMetadata {
  return {
    name: activityLeaseName(instance.name),
    namespace: instance.namespace,
    labels: { [LABEL_INSTANCE]: instance.name },
    ...(instance.uid
      ? {
          ownerReferences: [
            {
              apiVersion: SETTEE_API_VERSION,
              kind: COUCH_INSTANCE_KIND,
              name: instance.name,
              uid: instance.uid,
            },
          ],
        }
      : {}),
  };
}

/** The activity Lease of the contract (api/contract.ts). */
export function buildActivityLease(renewal: ActivityRenewal): ActivityLeaseJson {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      ...buildActivityLeaseMetadata(renewal.instance),
      annotations: { [ANNOTATION_OPEN_STREAMS]: String(renewal.openStreams) },
    },
    spec: { holderIdentity: renewal.holderIdentity, renewTime: formatMicroTime(renewal.renewTime) },
  };
}

export type ActivityLeaseWriter = (renewal: ActivityRenewal) => Promise<void>;

/**
 * One server-side apply per renewal: it creates the Lease or updates it, with no read first.
 * Every replica applies under the same field manager with force, so the last renewal wins.
 */
export function activityLeaseWriter(customObjects: CustomObjectsApi): ActivityLeaseWriter {
  return (renewal) => applyLease(customObjects, buildActivityLease(renewal), GATEWAY_FIELD_MANAGER);
}

/**
 * Server-side applies a Lease body through the custom-objects client, which sends the JSON as it
 * is: the typed Lease model would drop renewTime's microseconds (see formatMicroTime).
 */
export async function applyLease(
  customObjects: CustomObjectsApi,
  lease: { metadata: { name: string; namespace: string } },
  fieldManager: string,
): Promise<void> {
  await callKube(() =>
    customObjects.patchNamespacedCustomObject(
      {
        group: 'coordination.k8s.io',
        version: 'v1',
        plural: 'leases',
        namespace: lease.metadata.namespace,
        name: lease.metadata.name,
        body: lease,
        fieldManager,
        force: true,
      },
      setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
    ),
  );
}
