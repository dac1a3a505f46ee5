{{/* The namespaces the manager watches, comma-separated; empty for all. */}}
{{- define "kre-runtime.watchNamespaces" -}}
{{- if .Values.watchNamespaces -}}
{{- join "," .Values.watchNamespaces -}}
{{- else if ne (include "kre-runtime.allNamespaces" .) "true" -}}
{{- .Release.Namespace -}}
{{- end -}}
{{- end }}

{{- define "kre-runtime.allNamespaces" -}}false{{- end }}
