{{/* The namespaces the manager watches, comma-separated; empty for all. */}}
{{- define "gordon.watchNamespaces" -}}
{{- if .Values.watchNamespaces -}}
{{- join "," .Values.watchNamespaces -}}
{{- else if ne (include "gordon.allNamespaces" .) "true" -}}
{{- .Release.Namespace -}}
{{- end -}}
{{- end }}

{{- define "gordon.allNamespaces" -}}true{{- end }}
