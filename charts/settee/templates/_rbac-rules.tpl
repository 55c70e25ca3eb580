{{/*
The RBAC rules, exactly what the code calls and nothing more (docs/helm.md lists the call behind
each verb). In-cluster, informers need list and watch; server-side apply needs patch, and create
when the object may not exist yet. test/integration/chart/rbac.test.ts checks each verb.
*/}}

{{/*
The operator, in every namespace it serves. The queuebindings rules are for the QueueBinding
controller (issue 5), which reads a binding's password Secret and writes its env Secret with the
Secret verbs below.
*/}}
{{- define "settee.operator.rules" -}}
# Informers over the custom resources; status written with a merge patch of the status subresource.
- apiGroups: ["settee.dev"]
  resources: ["couchinstances", "queuebindings"]
  verbs: ["list", "watch"]
- apiGroups: ["settee.dev"]
  resources: ["couchinstances/status", "queuebindings/status"]
  verbs: ["patch"]
# Backups (docs/backups.md): an informer over CouchBackups; the schedule driver and the hibernation
# path create them, the backup controller adopts hand-made ones (owner reference: patch), reads a
# Running one live before calling it cut off (get), writes their status, and deletes those
# retention drops.
- apiGroups: ["settee.dev"]
  resources: ["couchbackups"]
  verbs: ["list", "watch", "get", "create", "patch", "delete"]
- apiGroups: ["settee.dev"]
  resources: ["couchbackups/status"]
  verbs: ["patch"]
# An instance's StatefulSet, Services and ConfigMap: informers, and server-side apply (create + patch).
- apiGroups: ["apps"]
  resources: ["statefulsets"]
  verbs: ["list", "watch", "create", "patch"]
# A wake or a hibernation applies only the StatefulSet's replicas, through its scale subresource.
- apiGroups: ["apps"]
  resources: ["statefulsets/scale"]
  verbs: ["patch"]
- apiGroups: [""]
  resources: ["services", "configmaps"]
  verbs: ["list", "watch", "create", "patch"]
# Admin and queue env Secrets: created once (never overwritten), read back when the create finds one,
# re-applied when their URL changes; a binding's password Secret, and an instance's backup storage
# Secret (spec.addons.backups.storageSecret), are read by name.
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["list", "watch", "get", "create", "patch"]
# An instance's data volume grows by raising its claim's request (the claim template is immutable).
- apiGroups: [""]
  resources: ["persistentvolumeclaims"]
  verbs: ["get", "patch"]
# The gateway's activity Leases, watched to decide hibernation and to sum the gateway's request
# counts into status.usage; closed days' count annotations are removed with a merge patch.
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  verbs: ["list", "watch", "patch"]
# Instance pods' addresses (informer, selected by label): an idle instance is asked there whether
# replication jobs run before it hibernates.
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["list", "watch"]
# Events about instances and bindings; a repeat bumps the count of the Event already written.
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create", "patch"]
{{- end }}

{{/* The gateway, in every namespace it serves. */}}
{{- define "settee.gateway.rules" -}}
# The route table (informer) and the wake request (a merge patch of one annotation).
- apiGroups: ["settee.dev"]
  resources: ["couchinstances"]
  verbs: ["list", "watch", "patch"]
# The queue's bindings (informer), and POST /v2/keys/rotate (a merge patch of the rotation annotation).
- apiGroups: ["settee.dev"]
  resources: ["queuebindings"]
  verbs: ["list", "watch", "patch"]
# Instance pods' addresses (informer, selected by label).
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["list", "watch"]
# The queue env Secrets the operator writes (informer, selected by label; RBAC cannot narrow a
# list to a label, so this is list and watch on the namespace's Secrets, and never get).
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["list", "watch"]
# Activity Leases, renewed with server-side apply (create the first time, patch after), and each
# process's request counts of the day kept in them (docs/metering.md).
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  verbs: ["create", "patch"]
{{- end }}
