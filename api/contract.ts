/**
 * The contract between the gateway and the operator: the only ways they talk to each other, both
 * through the Kubernetes API. The operator is the only writer of a StatefulSet's replicas; the
 * gateway never scales anything, it records demand.
 *
 * Activity: for each instance it serves, the gateway renews a coordination.k8s.io/v1 Lease named
 * `activityLeaseName(instance)` in the instance's namespace, setting `spec.renewTime` to now and
 * `spec.holderIdentity` to its replica name, at most once per ACTIVITY_REPORT_INTERVAL_MS per
 * instance per gateway replica. It renews on every interval in which a request arrived AND on every
 * interval while a long-lived stream (continuous `_changes`, a replication) stays open, so an
 * instance with open streams never looks idle. If a gateway replica dies its streams are gone too,
 * and renewals stop. The Lease carries LABEL_INSTANCE so the operator can watch it, and the operator
 * hibernates once `now - renewTime > spec.hibernation.idleAfter` (and keepAlive is false).
 *
 * Wake: a request for a hibernated instance makes the gateway set ANNOTATION_WAKE_REQUESTED on the
 * CouchInstance to the current RFC 3339 time (a JSON merge patch; writing it twice is harmless, so
 * several gateway replicas need no coordination). The operator scales the StatefulSet to 1 when that
 * time is later than `status.hibernatedAt`, and counts it as activity.
 *
 * Scheduling: when the scheduler cannot place an instance's pod for a lasting reason, both read its
 * message from the pod's PodScheduled condition (pod-scheduling.ts): the operator reports it in the
 * instance's conditions, the gateway refuses requests at once instead of holding them.
 *
 * Addresses: the gateway reads each instance's Pods (label LABEL_INSTANCE, which the pod template
 * carries): `status.podIP`, the first TCP port of its containers, and the Ready condition. A pod has
 * its IP from the moment it runs, and the gateway probes CouchDB's /_up itself, so neither the
 * kubelet's probe period nor the endpoints controller's propagation is on the wake path; a pod being
 * deleted takes no new requests. (EndpointSlices would add that propagation, and the API server
 * refuses the loopback addresses the local platform needs in them.)
 */

export const SETTEE_GROUP = 'settee.dev';
export const SETTEE_VERSION = 'v1alpha1';
export const SETTEE_API_VERSION = `${SETTEE_GROUP}/${SETTEE_VERSION}`;

/** Set on every object Settee creates for an instance or binding; the value is the owner's name. */
export const LABEL_INSTANCE = 'settee.dev/instance';
export const ANNOTATION_WAKE_REQUESTED = 'settee.dev/wake-requested';
/** Informational: number of long-lived streams open at the gateway replica that last renewed. */
export const ANNOTATION_OPEN_STREAMS = 'settee.dev/open-streams';

export const ACTIVITY_REPORT_INTERVAL_MS = 5_000;

export const COUCHDB_PORT = 5984;

export function activityLeaseName(instance: string): string {
  return `${instance}-activity`;
}

export function headlessServiceName(instance: string): string {
  return `${instance}-headless`;
}

export function clientServiceName(instance: string): string {
  return instance;
}

export function adminSecretName(instance: string): string {
  return `${instance}-admin`;
}

/** Keys of the admin Secret that tenants (and tests) read; `url` is the endpoint with the credentials as userinfo. */
export const ADMIN_SECRET_KEYS = { username: 'username', password: 'password', url: 'url' } as const;

/**
 * Where an instance is reached at the gateway. In a cluster the template is host based,
 * `https://{name}.{namespace}.<domain>`; on one machine, with no DNS, a path prefix,
 * `http://127.0.0.1:<port>/db/{namespace}/{name}`. The operator writes the result to status.endpoint.
 */
export function renderEndpoint(template: string, ref: { namespace: string; name: string }): string {
  return template.replaceAll('{namespace}', ref.namespace).replaceAll('{name}', ref.name);
}

/** Path prefixes the gateway reserves on its listener (local form, and the queue API). */
export const INSTANCE_PATH_PREFIX = '/db';
export const QUEUE_PATH_PREFIX = '/queue';
