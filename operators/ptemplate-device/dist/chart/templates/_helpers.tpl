{{/* The namespaces the manager watches, comma-separated; empty for all. */}}
{{- define "ptemplate-device.watchNamespaces" -}}
{{- if .Values.watchNamespaces -}}
{{- join "," .Values.watchNamespaces -}}
{{- else if ne (include "ptemplate-device.allNamespaces" .) "true" -}}
{{- .Release.Namespace -}}
{{- end -}}
{{- end }}

{{- define "ptemplate-device.allNamespaces" -}}true{{- end }}
