{{/* Chart name, overridable. */}}
{{- define "mds-scaler.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name used as the prefix of every object. Truncated to 63 characters, the
DNS label limit; a release already named after the chart is not repeated.
*/}}
{{- define "mds-scaler.fullname" -}}
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

{{- define "mds-scaler.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "mds-scaler.labels" -}}
helm.sh/chart: {{ include "mds-scaler.chart" . }}
{{ include "mds-scaler.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: mds-scaler
{{- end }}

{{/* Labels that select the controller pods; immutable once installed. */}}
{{- define "mds-scaler.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mds-scaler.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "mds-scaler.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "mds-scaler.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "mds-scaler.image" -}}
{{- $repository := .Values.image.repository }}
{{- with .Values.image.registry }}
{{- $repository = printf "%s/%s" . $repository }}
{{- end }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" $repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" $repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{- define "mds-scaler.leaseName" -}}
{{- default (include "mds-scaler.fullname" .) .Values.leaderElection.leaseName }}
{{- end }}

{{/*
The binding fence's keys (src/core/api/model-deployment.ts): the label routes
bound targets to the fence webhook; the annotations are what it guards.
*/}}
{{- define "mds-scaler.boundLabel" -}}
modeldeployment.gpustack.ai/scaler-bound
{{- end }}
{{- define "mds-scaler.bindingAnnotation" -}}
modeldeployment.gpustack.ai/scaler-binding
{{- end }}
{{- define "mds-scaler.decisionAnnotation" -}}
modeldeployment.gpustack.ai/scaler-decision
{{- end }}

{{/* Webhook objects: the Service the API server calls, and the TLS material. */}}
{{- define "mds-scaler.webhookServiceName" -}}
{{- include "mds-scaler.fullname" . }}
{{- end }}

{{- define "mds-scaler.webhookTlsSecretName" -}}
{{- printf "%s-webhook-tls" (include "mds-scaler.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "mds-scaler.webhookCertificateName" -}}
{{- printf "%s-webhook" (include "mds-scaler.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* With cert-manager, its CA injector fills caBundle; otherwise the controller patches it. */}}
{{- define "mds-scaler.webhookAnnotations" -}}
annotations:
  cert-manager.io/inject-ca-from: {{ printf "%s/%s" .Release.Namespace (include "mds-scaler.webhookCertificateName" .) }}
{{- end }}

{{/*
Prometheus label names that podTargetLabels produce: the operator replaces every
character outside [a-zA-Z0-9_] with "_".
*/}}
{{- define "mds-scaler.podTargetLabelNames" -}}
{{- range .Values.podMonitor.podTargetLabels }}
{{ regexReplaceAll "[^a-zA-Z0-9_]" . "_" }}
{{- end }}
{{- end }}

{{/* The Role granting scalers and targets in controller.watchNamespace. */}}
{{- define "mds-scaler.watchRoleName" -}}
{{- printf "%s-watch" (include "mds-scaler.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
namespaceSelector of every webhook: webhooks.namespaceSelector, narrowed to the
watched namespace when controller.watchNamespace is set (the controller may read
objects there only, and another installation answers for other namespaces).
kubernetes.io/metadata.name is set on every namespace by the API server.
*/}}
{{- define "mds-scaler.webhookNamespaceSelector" -}}
{{- $selector := deepCopy .Values.webhooks.namespaceSelector }}
{{- with .Values.controller.watchNamespace }}
{{- $expressions := default list (get $selector "matchExpressions") }}
{{- $_ := set $selector "matchExpressions" (append $expressions (dict "key" "kubernetes.io/metadata.name" "operator" "In" "values" (list .))) }}
{{- end }}
{{- with $selector -}}
namespaceSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
The controller's rights on scalers and targets, in a ClusterRole or, with
controller.watchNamespace, in a Role there. Only the verbs it calls.
*/}}
{{- define "mds-scaler.workloadRules" }}
  # Scalers: list and watch them, read one for the binding fence, add and
  # remove the finalizer with a JSON patch, and write status through its subresource.
  - apiGroups: [worker.gpustack.ai]
    resources: [modeldeploymentscalers]
    verbs: [get, list, watch, patch]
  - apiGroups: [worker.gpustack.ai]
    resources: [modeldeploymentscalers/status]
    verbs: [patch]
  # Targets: list, watch and read them, and commit replica counts with a guarded JSON patch.
  - apiGroups: [worker.gpustack.ai]
    resources: [modeldeployments]
    verbs: [get, list, watch, patch]
{{- end }}

{{/*
The sampling pass's query plan: prometheus.queries when set; otherwise native
where the PodMonitor stores the engines' histograms as native ones (the plan
reads its latency sums from them), and the controller's default, roles, where
it does not.
*/}}
{{- define "mds-scaler.queryPlan" -}}
{{- if .Values.prometheus.queries -}}
{{- .Values.prometheus.queries -}}
{{- else if .Values.podMonitor.convertClassicHistogramsToNHCB -}}
native
{{- else -}}
roles
{{- end -}}
{{- end }}

{{/*
How the engines' series are read: the controller's Prometheus and label flags,
which calibrate takes as the controller's own, so the floor refresh reads the
series exactly as the controller does. Quoted: a value such as ":" would
otherwise turn the item into a YAML mapping.
*/}}
{{- define "mds-scaler.prometheusArgs" -}}
- {{ printf "--prometheus-url=%v" .Values.prometheus.url | quote }}
- {{ printf "--prometheus-timeout-ms=%d" (int .Values.prometheus.timeoutMs) | quote }}
- {{ printf "--prometheus-queries=%v" (include "mds-scaler.queryPlan" .) | quote }}
{{- if .Values.prometheus.matchers }}
- {{ printf "--prometheus-matchers=%v" .Values.prometheus.matchers | quote }}
{{- end }}
{{- if .Values.prometheus.headersSecret }}
- {{ printf "--prometheus-headers-file=%s/headers" (include "mds-scaler.prometheusHeadersDir" .) | quote }}
{{- end }}
- {{ printf "--metric-separator=%v" .Values.metricSeparator | quote }}
- {{ printf "--label-namespace=%v" .Values.labels.namespace | quote }}
- {{ printf "--label-pod=%v" .Values.labels.pod | quote }}
- {{ printf "--label-deployment=%v" .Values.labels.deployment | quote }}
- {{ printf "--label-role=%v" .Values.labels.role | quote }}
{{- end }}

{{/*
The Prometheus headers Secret (prometheus.headersSecret), mounted where
prometheusArgs points --prometheus-headers-file, in every pod that reads
Prometheus: the controller and the floor refresh jobs (each includes these
only when a Secret is named).
*/}}
{{- define "mds-scaler.prometheusHeadersDir" -}}
/etc/mds-scaler/prometheus-headers
{{- end }}

{{- define "mds-scaler.prometheusHeadersMount" -}}
- name: prometheus-headers
  mountPath: {{ include "mds-scaler.prometheusHeadersDir" . }}
  readOnly: true
{{- end }}

{{- define "mds-scaler.prometheusHeadersVolume" -}}
- name: prometheus-headers
  secret:
    secretName: {{ .Values.prometheus.headersSecret | quote }}
    items:
      - key: headers
        path: headers
{{- end }}
