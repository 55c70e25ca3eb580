/**
 * Every Kubernetes API call the operator and the gateway make, as an RBAC check: the verb, the
 * resource, and where in the code it is made. rbac.test.ts proves the chart's RBAC allows each one
 * and grants nothing beyond them. When the code starts making a new call, add it here (the test of
 * the component then fails until the chart's rules in templates/_rbac-rules.tpl allow it).
 */
export interface ApiCall {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  /** Where the objects live: the namespaces the component serves, or the release namespace. */
  scope: 'served' | 'release';
  /** For calls limited to one object by name. */
  name?: 'operator-lease';
  /** The code that makes the call. */
  by: string;
}

const informer = (group: string, resource: string, by: string): ApiCall[] =>
  ['list', 'watch'].map((verb) => ({ verb, group, resource, scope: 'served', by: `${by} (informer)` }));

/** Server-side apply creates the object when it is missing (create) and patches it otherwise. */
const serverSideApply = (group: string, resource: string, by: string): ApiCall[] =>
  ['create', 'patch'].map((verb) => ({
    verb,
    group,
    resource,
    scope: 'served',
    by: `${by} (server-side apply)`,
  }));

export const OPERATOR_API_CALLS: readonly ApiCall[] = [
  ...informer('settee.dev', 'couchinstances', 'operator/controllers/couch-instance/registration.ts'),
  ...informer('settee.dev', 'queuebindings', 'operator/controllers/queue-binding'),
  {
    verb: 'patch',
    group: 'settee.dev',
    resource: 'couchinstances',
    subresource: 'status',
    scope: 'served',
    by: 'operator/controllers/couch-instance (kube/status-patch.ts)',
  },
  {
    verb: 'patch',
    group: 'settee.dev',
    resource: 'queuebindings',
    subresource: 'status',
    scope: 'served',
    by: 'operator/controllers/queue-binding (kube/status-patch.ts)',
  },
  ...informer('settee.dev', 'couchbackups', 'operator/controllers/couch-backup/registration.ts'),
  {
    verb: 'create',
    group: 'settee.dev',
    resource: 'couchbackups',
    scope: 'served',
    by: 'operator/controllers/backup-schedule/reconciler.ts, couch-instance/final-backup.ts',
  },
  {
    verb: 'patch',
    group: 'settee.dev',
    resource: 'couchbackups',
    scope: 'served',
    by: 'operator/controllers/couch-backup/reconciler.ts (adopt: owner reference and labels)',
  },
  {
    verb: 'get',
    group: 'settee.dev',
    resource: 'couchbackups',
    scope: 'served',
    by: 'operator/controllers/couch-backup/reconciler.ts (a Running one not in this process, read live)',
  },
  {
    verb: 'delete',
    group: 'settee.dev',
    resource: 'couchbackups',
    scope: 'served',
    by: 'operator/controllers/couch-backup/reconciler.ts (retention)',
  },
  {
    verb: 'patch',
    group: 'settee.dev',
    resource: 'couchbackups',
    subresource: 'status',
    scope: 'served',
    by: 'operator/controllers/couch-backup (kube/status-patch.ts)',
  },
  {
    verb: 'get',
    group: '',
    resource: 'secrets',
    scope: 'served',
    by: 'operator/controllers/couch-backup/reconciler.ts (the storage Secret, readNamespacedSecret)',
  },
  ...informer('apps', 'statefulsets', 'operator/controllers/couch-instance/registration.ts'),
  ...serverSideApply('apps', 'statefulsets', 'operator/controllers/couch-instance/owned-objects.ts'),
  {
    verb: 'patch',
    group: 'apps',
    resource: 'statefulsets',
    subresource: 'scale',
    scope: 'served',
    by: 'operator/controllers/couch-instance/owned-objects.ts (replicas alone: server-side apply of the Scale)',
  },
  ...informer('', 'services', 'operator/controllers/couch-instance/registration.ts'),
  ...serverSideApply('', 'services', 'operator/controllers/couch-instance/owned-objects.ts'),
  ...informer('', 'configmaps', 'operator/controllers/couch-instance/registration.ts'),
  ...serverSideApply('', 'configmaps', 'operator/controllers/couch-instance/owned-objects.ts'),
  ...informer('', 'secrets', 'operator/controllers/couch-instance/registration.ts'),
  ...serverSideApply('', 'secrets', 'operator/controllers/couch-instance/owned-objects.ts'),
  {
    verb: 'get',
    group: '',
    resource: 'secrets',
    scope: 'served',
    by: 'operator/controllers/couch-instance/owned-objects.ts (readNamespacedSecret)',
  },
  {
    verb: 'get',
    group: '',
    resource: 'persistentvolumeclaims',
    scope: 'served',
    by: 'operator/controllers/couch-instance/volume-growth.ts',
  },
  {
    verb: 'patch',
    group: '',
    resource: 'persistentvolumeclaims',
    scope: 'served',
    by: 'operator/controllers/couch-instance/volume-growth.ts',
  },
  ...informer('coordination.k8s.io', 'leases', 'operator/controllers/couch-instance/registration.ts'),
  {
    verb: 'list',
    group: 'coordination.k8s.io',
    resource: 'leases',
    scope: 'served',
    by: 'operator/controllers/couch-instance/reconciler.ts (the live read before scaling to 0)',
  },
  {
    verb: 'patch',
    group: 'coordination.k8s.io',
    resource: 'leases',
    scope: 'served',
    by: 'operator/controllers/couch-instance/prune-request-usage.ts (closed days’ usage annotations)',
  },
  ...informer('', 'pods', 'operator/controllers/couch-instance/registration.ts'),
  { verb: 'create', group: '', resource: 'events', scope: 'served', by: 'kube/events.ts' },
  {
    verb: 'patch',
    group: '',
    resource: 'events',
    scope: 'served',
    by: 'kube/events.ts (repeat count)',
  },
  {
    verb: 'create',
    group: 'coordination.k8s.io',
    resource: 'leases',
    scope: 'release',
    by: 'kube/leader-election.ts',
  },
  {
    verb: 'get',
    group: 'coordination.k8s.io',
    resource: 'leases',
    scope: 'release',
    name: 'operator-lease',
    by: 'kube/leader-election.ts',
  },
  {
    verb: 'update',
    group: 'coordination.k8s.io',
    resource: 'leases',
    scope: 'release',
    name: 'operator-lease',
    by: 'kube/leader-election.ts',
  },
];

export const GATEWAY_API_CALLS: readonly ApiCall[] = [
  ...informer('settee.dev', 'couchinstances', 'gateway/proxy/route-table.ts'),
  {
    verb: 'patch',
    group: 'settee.dev',
    resource: 'couchinstances',
    scope: 'served',
    by: 'gateway/proxy/waker.ts (wake annotation)',
  },
  ...informer('', 'pods', 'gateway/proxy/endpoint-cache.ts'),
  ...informer('settee.dev', 'queuebindings', 'gateway/queue/bindings/kube-binding-source.ts'),
  {
    verb: 'patch',
    group: 'settee.dev',
    resource: 'queuebindings',
    scope: 'served',
    by: 'gateway/queue/bindings/signing-key-rotation.ts (rotation annotation)',
  },
  ...informer('', 'secrets', 'gateway/queue/bindings/kube-binding-source.ts'),
  ...serverSideApply(
    'coordination.k8s.io',
    'leases',
    'gateway/proxy/activity-lease.ts, gateway/envelope/request-usage-lease.ts',
  ),
];
