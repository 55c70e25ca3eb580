{{/*
Names, labels and computed settings, each defined once. Every object name starts with
settee.fullname; every object carries settee.labels; selectors use settee.selectorLabels only,
because a Deployment's selector is immutable and must never include the version.
*/}}

{{- define "settee.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* <release>-settee, or the release name alone when it already says "settee". */}}
{{- define "settee.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "settee.operator.fullname" -}}
{{- printf "%s-operator" (include "settee.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "settee.gateway.fullname" -}}
{{- printf "%s-gateway" (include "settee.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "settee.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every object. Call with (dict "root" $ "component" "operator"). */}}
{{- define "settee.labels" -}}
helm.sh/chart: {{ include "settee.chart" .root }}
{{ include "settee.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/part-of: settee
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- with .root.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The immutable subset of the labels: what Deployments, Services and policies select on. */}}
{{- define "settee.selectorLabels" -}}
app.kubernetes.io/name: {{ include "settee.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "settee.operator.serviceAccountName" -}}
{{- if .Values.operator.serviceAccount.create }}
{{- default (include "settee.operator.fullname" .) .Values.operator.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.operator.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "settee.gateway.serviceAccountName" -}}
{{- if .Values.gateway.serviceAccount.create }}
{{- default (include "settee.gateway.fullname" .) .Values.gateway.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.gateway.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* repository[:tag][@digest]; the tag defaults to the chart's appVersion. Call with (dict "image" .Values.x.image "root" $). */}}
{{- define "settee.image" -}}
{{- $tag := default .root.Chart.AppVersion .image.tag }}
{{- if .image.digest }}
{{- printf "%s:%s@%s" .image.repository $tag .image.digest }}
{{- else }}
{{- printf "%s:%s" .image.repository $tag }}
{{- end }}
{{- end }}

{{/* The Secret holding the queue master secret: the user's own, or the one the chart generates. */}}
{{- define "settee.masterSecret.name" -}}
{{- default (printf "%s-queue-master" (include "settee.fullname" .)) .Values.queue.masterSecret.existingSecret }}
{{- end }}

{{- define "settee.gateway.tlsSecretName" -}}
{{- default (printf "%s-gateway-tls" (include "settee.fullname" .)) .Values.ingress.tls.secretName }}
{{- end }}

{{/* The gateway's in-cluster base URL, used when no domain is set. */}}
{{- define "settee.gateway.clusterUrl" -}}
{{- $scheme := ternary "https" "http" (ne .Values.gateway.tls.existingSecret "") }}
{{- printf "%s://%s.%s.svc:%v" $scheme (include "settee.gateway.fullname" .) .Release.Namespace .Values.gateway.service.port }}
{{- end }}

{{/*
Where clients reach the gateway: https://<domain> behind the Ingress, else the in-cluster Service.
*/}}
{{- define "settee.gateway.publicUrl" -}}
{{- if .Values.domain }}
{{- printf "https://%s" .Values.domain }}
{{- else }}
{{- include "settee.gateway.clusterUrl" . }}
{{- end }}
{{- end }}

{{/*
An instance's URL at the gateway (SETTEE_ENDPOINT_TEMPLATE): host based under the domain, else the
gateway's path form /db/<namespace>/<name>, which needs no DNS.
*/}}
{{- define "settee.endpointTemplate" -}}
{{- if .Values.domain }}
{{- printf "https://{name}.{namespace}.%s" .Values.domain }}
{{- else }}
{{- printf "%s/db/{namespace}/{name}" (include "settee.gateway.clusterUrl" .) }}
{{- end }}
{{- end }}

{{/*
Grace period: the preStop pause (endpoints are removed while the pod still serves), then the
process's own shutdown timeout, then a margin so the kubelet never kills a drain that keeps time.
Call with the component's values.
*/}}
{{- define "settee.terminationGracePeriodSeconds" -}}
{{- add (default 0 .preStopSleepSeconds) .shutdownTimeoutSeconds 10 }}
{{- end }}

{{/* Restricted Pod Security Standard: what both Deployments run with. */}}
{{- define "settee.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.securityContext.runAsUser }}
runAsGroup: {{ .Values.securityContext.runAsGroup }}
# Mounted Secrets (the gateway's certificate) become readable by this group.
fsGroup: {{ .Values.securityContext.runAsGroup }}
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "settee.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop:
    - ALL
{{- end }}

{{/*
Spreads replicas over nodes unless the user gave an affinity of their own. Call with
(dict "root" $ "component" "gateway" "affinity" .Values.gateway.affinity).
*/}}
{{- define "settee.affinity" -}}
{{- if .affinity }}
{{- toYaml .affinity }}
{{- else -}}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- include "settee.selectorLabels" (dict "root" .root "component" .component) | nindent 12 }}
{{- end }}
{{- end }}

{{- define "settee.console.fullname" -}}
{{- printf "%s-console" (include "settee.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "settee.console.serviceAccountName" -}}
{{- if .Values.console.serviceAccount.create }}
{{- default (include "settee.console.fullname" .) .Values.console.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.console.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret whose key encrypts the console's session cookies (SETTEE_CONSOLE_SESSION_SECRET). */}}
{{- define "settee.console.sessionSecretName" -}}
{{- default (printf "%s-session" (include "settee.console.fullname" .)) .Values.console.sessionSecret.existingSecret }}
{{- end }}

{{/* The console's public host: console.host, else console.<domain>. */}}
{{- define "settee.console.host" -}}
{{- default (printf "console.%s" .Values.domain) .Values.console.host }}
{{- end }}
