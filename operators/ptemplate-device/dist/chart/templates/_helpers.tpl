{{/* The namespaces the manager watches, comma-separated; empty for all. */}}
{{- define "ptemplate-device.watchNamespaces" -}}
{{- if .Values.watchNamespaces -}}
{{- join "," .Values.watchNamespaces -}}
{{- else if ne (include "ptemplate-device.allNamespaces" .) "true" -}}
{{- .Release.Namespace -}}
{{- end -}}
{{- end }}
{{- define "ptemplate-device.prometheus" -}}
{{- $enable := toString .Values.prometheus.enable -}}
{{- if or (eq $enable "true") (and (eq $enable "auto") (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor")) -}}
true
{{- end -}}
{{- end }}

{{- define "ptemplate-device.allNamespaces" -}}true{{- end }}
