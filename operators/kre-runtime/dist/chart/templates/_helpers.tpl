{{/* The namespaces the manager watches, comma-separated; empty for all. */}}
{{- define "kre-runtime.watchNamespaces" -}}
{{- if .Values.watchNamespaces -}}
{{- join "," .Values.watchNamespaces -}}
{{- else if ne (include "kre-runtime.allNamespaces" .) "true" -}}
{{- .Release.Namespace -}}
{{- end -}}
{{- end }}
{{- define "kre-runtime.prometheus" -}}
{{- $enable := toString .Values.prometheus.enable -}}
{{- if or (eq $enable "true") (and (eq $enable "auto") (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor")) -}}
true
{{- end -}}
{{- end }}

{{- define "kre-runtime.allNamespaces" -}}false{{- end }}
