{{/* The namespaces the manager watches, comma-separated; empty for all. */}}
{{- define "minimart.watchNamespaces" -}}
{{- if .Values.watchNamespaces -}}
{{- join "," .Values.watchNamespaces -}}
{{- else if ne (include "minimart.allNamespaces" .) "true" -}}
{{- .Release.Namespace -}}
{{- end -}}
{{- end }}

{{- define "minimart.allNamespaces" -}}true{{- end }}
