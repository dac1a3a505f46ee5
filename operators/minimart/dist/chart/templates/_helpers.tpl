{{/* The namespaces the manager watches, comma-separated; empty for all. */}}
{{- define "minimart.watchNamespaces" -}}
{{- if .Values.watchNamespaces -}}
{{- join "," .Values.watchNamespaces -}}
{{- else if ne (include "minimart.allNamespaces" .) "true" -}}
{{- .Release.Namespace -}}
{{- end -}}
{{- end }}
{{- define "minimart.prometheus" -}}
{{- $enable := toString .Values.prometheus.enable -}}
{{- if or (eq $enable "true") (and (eq $enable "auto") (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor")) -}}
true
{{- end -}}
{{- end }}

{{- define "minimart.allNamespaces" -}}true{{- end }}
