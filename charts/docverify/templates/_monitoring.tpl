{{/*
A ServiceMonitor scraping one component's Service (its port `portName`, path /metrics).
Call with (dict "root" $ "component" "api" "port" "http").
*/}}
{{- define "docverify.serviceMonitor" -}}
{{- $sm := .root.Values.metrics.serviceMonitor }}
{{- $component := dict "root" .root "component" .component }}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "docverify.componentName" $component }}
  namespace: {{ default .root.Release.Namespace $sm.namespace }}
  labels:
    {{- include "docverify.componentLabels" $component | nindent 4 }}
    {{- with $sm.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  jobLabel: app.kubernetes.io/component
  namespaceSelector:
    matchNames:
      - {{ .root.Release.Namespace }}
  selector:
    matchLabels:
      {{- include "docverify.componentSelectorLabels" $component | nindent 6 }}
  endpoints:
    - port: {{ .port }}
      path: /metrics
      scheme: http
      {{- with $sm.interval }}
      interval: {{ . }}
      {{- end }}
      {{- with $sm.scrapeTimeout }}
      scrapeTimeout: {{ . }}
      {{- end }}
{{- end }}
