{{/* Chart name, cut to 63 characters (a DNS label). */}}
{{- define "docverify.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name: <release>-<name>, or the release name alone when it already contains the chart name.
Cut to 63 characters; component suffixes are added with "docverify.componentName", which cuts again.
*/}}
{{- define "docverify.fullname" -}}
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

{{/* <fullname>-<component>, cut to 63 characters. Call with (dict "root" $ "component" "api"). */}}
{{- define "docverify.componentName" -}}
{{- $full := include "docverify.fullname" .root }}
{{- printf "%s-%s" ($full | trunc (int (sub 62 (len .component)))) .component | trimSuffix "-" }}
{{- end }}

{{/* Chart name and version for the helm.sh/chart label. */}}
{{- define "docverify.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "docverify.labels" -}}
helm.sh/chart: {{ include "docverify.chart" . }}
{{ include "docverify.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: docverify
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Selector labels of the release. */}}
{{- define "docverify.selectorLabels" -}}
app.kubernetes.io/name: {{ include "docverify.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Labels of one component's objects. Call with (dict "root" $ "component" "api"). */}}
{{- define "docverify.componentLabels" -}}
{{ include "docverify.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* Selector labels of one component's Pods. Call with (dict "root" $ "component" "api"). */}}
{{- define "docverify.componentSelectorLabels" -}}
{{ include "docverify.selectorLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/*
Labels the operator puts on every step Pod (platform/kube/step-pod.ts STEP_POD_LABELS): fixed values, not
the chart's name. Add the step with `docverify.io/step`.
*/}}
{{- define "docverify.stepPodSelectorLabels" -}}
app.kubernetes.io/name: docverify
app.kubernetes.io/component: step
{{- end }}

{{/* ServiceAccount name of a component (api, operator, step). Call with (dict "root" $ "component" "api"). */}}
{{- define "docverify.serviceAccountName" -}}
{{- $values := index .root.Values .component }}
{{- if eq .component "step" }}{{ $values = .root.Values.steps }}{{ end }}
{{- if $values.serviceAccount.create }}
{{- default (include "docverify.componentName" .) $values.serviceAccount.name }}
{{- else }}
{{- default "default" $values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The docverify image reference. */}}
{{- define "docverify.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{/* Whether the bundled Redis / MinIO run. */}}
{{- define "docverify.redis.bundled" -}}
{{- if or .Values.evaluation .Values.redis.bundled.enabled }}true{{ end }}
{{- end }}
{{- define "docverify.s3.bundled" -}}
{{- if or .Values.evaluation .Values.s3.bundled.enabled }}true{{ end }}
{{- end }}

{{/* Secret names. */}}
{{- define "docverify.clientsSecretName" -}}
{{- default (include "docverify.componentName" (dict "root" . "component" "clients")) .Values.clients.existingSecret }}
{{- end }}
{{- define "docverify.signingKeySecretName" -}}
{{- default (include "docverify.componentName" (dict "root" . "component" "token-signing-key")) .Values.tokenSigningKey.existingSecret }}
{{- end }}
{{- define "docverify.attestationKeySecretName" -}}
{{- default (include "docverify.componentName" (dict "root" . "component" "attestation-key")) .Values.attestationKey.existingSecret }}
{{- end }}
{{- define "docverify.credentialsSecretName" -}}
{{- default (include "docverify.componentName" (dict "root" . "component" "credentials")) .Values.credentials.existingSecret }}
{{- end }}
{{- define "docverify.redisSecretName" -}}
{{- if and .Values.redis.existingSecret (not (include "docverify.redis.bundled" .)) }}
{{- .Values.redis.existingSecret }}
{{- else }}
{{- include "docverify.componentName" (dict "root" . "component" "redis-url") }}
{{- end }}
{{- end }}
{{- define "docverify.redisSecretKey" -}}
{{- if and .Values.redis.existingSecret (not (include "docverify.redis.bundled" .)) }}
{{- .Values.redis.existingSecretKey }}
{{- else }}REDIS_URL{{- end }}
{{- end }}

{{/* The S3 endpoint the service connects to. */}}
{{- define "docverify.s3.endpoint" -}}
{{- if include "docverify.s3.bundled" . }}
{{- printf "http://%s:9000" (include "docverify.componentName" (dict "root" . "component" "minio")) }}
{{- else }}
{{- required "s3.endpoint is required: set it to your S3-compatible storage (e.g. http://minio.storage:9000), or set evaluation=true for the bundled one" .Values.s3.endpoint }}
{{- end }}
{{- end }}

{{/* The TCP port of the external S3 endpoint: s3.egress.port, else the endpoint's port or scheme default. */}}
{{- define "docverify.s3.port" -}}
{{- if .Values.s3.egress.port }}
{{- .Values.s3.egress.port }}
{{- else }}
{{- $endpoint := .Values.s3.endpoint }}
{{- if not (regexMatch "^[a-zA-Z][a-zA-Z0-9+.-]*://" $endpoint) }}
{{- $endpoint = printf "%s://%s" (ternary "https" "http" .Values.s3.useSsl) $endpoint }}
{{- end }}
{{- $url := urlParse $endpoint }}
{{- $port := regexFind ":[0-9]+$" $url.host }}
{{- if $port }}{{ trimPrefix ":" $port }}{{ else if eq $url.scheme "https" }}443{{ else }}80{{ end }}
{{- end }}
{{- end }}

{{/* The public URL of the API. */}}
{{- define "docverify.publicUrl" -}}
{{- if .Values.config.publicUrl }}
{{- .Values.config.publicUrl | trimSuffix "/" }}
{{- else if and .Values.api.ingress.enabled .Values.api.ingress.hosts }}
{{- $host := (first .Values.api.ingress.hosts).host }}
{{- $tls := false }}
{{- range .Values.api.ingress.tls }}{{ if has $host .hosts }}{{ $tls = true }}{{ end }}{{ end }}
{{- printf "%s://%s" (ternary "https" "http" $tls) $host }}
{{- else }}
{{- printf "http://%s.%s.svc:%v" (include "docverify.componentName" (dict "root" . "component" "api")) .Release.Namespace .Values.api.service.port }}
{{- end }}
{{- end }}

{{/*
A Secret's value that is generated once and then kept: the live Secret's value (lookup) on upgrades,
else a random one. Call with (dict "root" $ "name" secretName "key" key "length" 48). Returns base64.
*/}}
{{- define "docverify.keptRandom" -}}
{{- $live := lookup "v1" "Secret" .root.Release.Namespace .name }}
{{- if and $live $live.data (hasKey $live.data .key) }}
{{- index $live.data .key }}
{{- else }}
{{- randAlphaNum (int .length) | b64enc }}
{{- end }}
{{- end }}

{{/* The restricted Pod security context. */}}
{{- define "docverify.podSecurityContext" -}}
{{ toYaml .Values.podSecurityContext }}
{{- end }}

{{/* The restricted container security context. */}}
{{- define "docverify.containerSecurityContext" -}}
{{ toYaml .Values.containerSecurityContext }}
{{- end }}

{{/*
NetworkPolicy peers of an external or in-cluster service, as a JSON list: (dict "cidrs" list
"namespaceSelector" map "podSelector" map). An empty list means the caller omits `to`, which allows any
destination on the rule's ports.
*/}}
{{- define "docverify.egressPeers" -}}
{{- $peers := list }}
{{- range .cidrs }}
{{- $peers = append $peers (dict "ipBlock" (dict "cidr" .)) }}
{{- end }}
{{- if or .namespaceSelector .podSelector }}
{{- $peer := dict }}
{{- with .namespaceSelector }}{{ $_ := set $peer "namespaceSelector" (dict "matchLabels" .) }}{{ end }}
{{- with .podSelector }}{{ $_ := set $peer "podSelector" (dict "matchLabels" .) }}{{ end }}
{{- $peers = append $peers $peer }}
{{- end }}
{{- toJson $peers }}
{{- end }}

{{/* One egress rule as a YAML list item: (dict "peers" list "ports" list-of-int). */}}
{{- define "docverify.egressRule" -}}
{{- $ports := list }}
{{- range .ports }}{{ $ports = append $ports (dict "protocol" "TCP" "port" (int .)) }}{{ end }}
{{- $rule := dict "ports" $ports }}
{{- with .peers }}{{ $_ := set $rule "to" . }}{{ end }}
{{- toYaml (list $rule) }}
{{- end }}

{{/*
Secret environment of the api and the operator: Redis URL, S3 keys and (operator, llm engine) the optional
LLM key, which the operator hands on to the agent Pods. Call with (dict "root" $ "llmKey" true|false).
*/}}
{{- define "docverify.secretEnv" -}}
{{- with .root }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "docverify.redisSecretName" . }}
      key: {{ include "docverify.redisSecretKey" . }}
- name: S3_ACCESS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "docverify.credentialsSecretName" . }}
      key: S3_ACCESS_KEY
- name: S3_SECRET_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "docverify.credentialsSecretName" . }}
      key: S3_SECRET_KEY
{{- if and $.llmKey (eq .Values.agent.engine "llm") }}
- name: DOCVERIFY_LLM_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "docverify.credentialsSecretName" . }}
      key: DOCVERIFY_LLM_API_KEY
      # Absent key = a model endpoint without an API key.
      optional: true
{{- end }}
{{- if and $.llmKey .Values.memory.enabled }}
# The tenant memory's key: the operator passes it on to the check step Pods (issue 23).
- name: DOCVERIFY_MEMORY_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "docverify.credentialsSecretName" . }}
      key: DOCVERIFY_MEMORY_KEY
      # Absent key (an existing Secret without it) = nothing is remembered; the step says so in its log.
      optional: true
{{- end }}
{{- end }}
{{- end }}

{{/* NetworkPolicy egress rule: DNS lookups to the cluster DNS. */}}
{{- define "docverify.egress.dns" -}}
- to:
    - namespaceSelector:
        matchLabels:
          {{- toYaml .Values.networkPolicy.dns.namespaceSelector | nindent 10 }}
      podSelector:
        matchLabels:
          {{- toYaml .Values.networkPolicy.dns.podSelector | nindent 10 }}
  ports:
    - protocol: UDP
      port: {{ .Values.networkPolicy.dns.port }}
    - protocol: TCP
      port: {{ .Values.networkPolicy.dns.port }}
{{- end }}

{{/* NetworkPolicy egress rule: the object store (bundled MinIO, or the external storage). */}}
{{- define "docverify.egress.s3" -}}
{{- if include "docverify.s3.bundled" . }}
{{- $peer := dict "podSelector" (dict "matchLabels" (include "docverify.componentSelectorLabels" (dict "root" . "component" "minio") | fromYaml)) }}
{{- include "docverify.egressRule" (dict "peers" (list $peer) "ports" (list 9000)) }}
{{- else }}
{{- include "docverify.egressRule" (dict "peers" (include "docverify.egressPeers" .Values.s3.egress | fromJsonArray) "ports" (list (include "docverify.s3.port" .))) }}
{{- end }}
{{- end }}

{{/* NetworkPolicy egress rule: Redis (bundled, or external). */}}
{{- define "docverify.egress.redis" -}}
{{- if include "docverify.redis.bundled" . }}
{{- $peer := dict "podSelector" (dict "matchLabels" (include "docverify.componentSelectorLabels" (dict "root" . "component" "redis") | fromYaml)) }}
{{- include "docverify.egressRule" (dict "peers" (list $peer) "ports" (list 6379)) }}
{{- else }}
{{- include "docverify.egressRule" (dict "peers" (include "docverify.egressPeers" .Values.redis.egress | fromJsonArray) "ports" (list .Values.redis.egress.port)) }}
{{- end }}
{{- end }}

{{/* NetworkPolicy egress rule: the Kubernetes API server. */}}
{{- define "docverify.egress.kubeApi" -}}
- to:
    {{- range .Values.networkPolicy.kubeApi.cidrs }}
    - ipBlock:
        cidr: {{ . }}
    {{- end }}
  ports:
    {{- range .Values.networkPolicy.kubeApi.ports }}
    - protocol: TCP
      port: {{ . }}
    {{- end }}
{{- end }}

{{/* config.allowedSourcePorts as DOCVERIFY_ALLOWED_SOURCE_PORTS: "80,443,8000-8999". */}}
{{- define "docverify.sourcePorts" -}}
{{- $out := list }}
{{- range .Values.config.allowedSourcePorts }}
{{- if kindIs "string" . }}{{ $out = append $out . }}{{ else }}{{ $out = append $out (int64 . | toString) }}{{ end }}
{{- end }}
{{- join "," $out }}
{{- end }}

{{/* config.allowedSourcePorts as NetworkPolicy ports (TCP; a "low-high" range becomes port + endPort). */}}
{{- define "docverify.sourcePortsEgress" -}}
{{- range .Values.config.allowedSourcePorts }}
{{- if kindIs "string" . }}
{{- $range := splitList "-" . }}
- protocol: TCP
  port: {{ index $range 0 | int64 }}
  endPort: {{ index $range 1 | int64 }}
{{- else }}
- protocol: TCP
  port: {{ int64 . }}
{{- end }}
{{- end }}
{{- end }}
