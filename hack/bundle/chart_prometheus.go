package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// phLabels stands for the labels prometheus.labels adds.
const phLabels = "@@PROMETHEUS-LABELS@@"

// prometheusCondition is when the chart makes the operator's ServiceMonitor and PrometheusRule:
// prometheus.enable true, or auto (the default) where the cluster serves their kinds, so that
// an install where prometheus-operator is absent does not fail on them.
const prometheusCondition = `{{- define "CHART.prometheus" -}}
{{- $enable := toString .Values.prometheus.enable -}}
{{- if or (eq $enable "true") (and (eq $enable "auto") (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor")) -}}
true
{{- end -}}
{{- end }}
`

// prometheusTemplates writes the ServiceMonitor and the PrometheusRule of the operator's
// config/prometheus (beside config/manifests) into templates/prometheus/, with the names it
// gives them, behind prometheus.enable; the ServiceMonitor also needs the
// secure metrics endpoint it scrapes (metrics.enable and metrics.secure).
func prometheusTemplates(o chartOptions) (map[string]string, error) {
	files := map[string]string{}
	for file, cond := range map[string]string{
		"monitor.yaml":         `{{- if and .Values.metrics.enable .Values.metrics.secure (include "CHART.prometheus" .) }}`,
		"prometheus_rule.yaml": `{{- if include "CHART.prometheus" . }}`,
	} {
		path := filepath.Join(o.config, "..", "prometheus", file)
		data, err := os.ReadFile(path) //nolint:gosec // the operator's config the caller names
		if err != nil {
			return nil, fmt.Errorf("the operator's monitoring config: %w", err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		u.Object = escapeTemplates(u.Object).(map[string]any)
		u.SetNamespace(phNamespace)
		labels := u.GetLabels()
		labels[phLabels] = phLabels
		u.SetLabels(labels)
		y, err := toTemplate(u.Object, nil, map[string]func(string) string{phLabels: func(indent string) string {
			return fmt.Sprintf("%s{{- with .Values.prometheus.labels }}\n%s{{- toYaml . | nindent %d }}\n%s{{- end }}",
				indent, indent, len(indent), indent)
		}})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		name := strings.ReplaceAll(strings.TrimSuffix(file, ".yaml"), "_", "-")
		files["templates/prometheus/"+name+".yaml"] = strings.ReplaceAll(cond, "CHART", o.name) + "\n" + y + "{{- end }}\n"
	}
	dashboard, err := dashboardTemplate(o)
	if err != nil {
		return nil, err
	}
	files["templates/prometheus/dashboard.yaml"] = dashboard
	return files, nil
}

// dashboardTemplate writes the operator's Grafana dashboard (config/prometheus/dashboard.json)
// in a ConfigMap, as config/prometheus's configMapGenerator makes it, behind
// prometheus.dashboard.enable, with prometheus.dashboard.labels (those Grafana's dashboard
// sidecar looks for).
func dashboardTemplate(o chartOptions) (string, error) {
	data, err := os.ReadFile(filepath.Join(o.config, "..", "prometheus", "dashboard.json")) //nolint:gosec // the operator's config the caller names
	if err != nil {
		return "", fmt.Errorf("the operator's dashboard: %w", err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": o.name + "-dashboard", "namespace": phNamespace, "labels": map[string]any{phLabels: phLabels}},
		"data":     map[string]any{o.name + ".json": string(data)},
	}}
	u.Object = escapeTemplates(u.Object).(map[string]any)
	y, err := toTemplate(u.Object, nil, map[string]func(string) string{phLabels: func(indent string) string {
		return fmt.Sprintf("%s{{- toYaml .Values.prometheus.dashboard.labels | nindent %d }}", indent, len(indent))
	}})
	if err != nil {
		return "", err
	}
	return "{{- if .Values.prometheus.dashboard.enable }}\n" + y + "{{- end }}\n", nil
}

// escapeTemplates keeps the alerts' own templates ({{ $labels.name }}, which Prometheus
// expands) from Helm: in every string of v, each {{ and }} becomes a Helm expression that
// prints it (a raw string, which YAML quoting leaves alone).
func escapeTemplates(v any) any {
	switch v := v.(type) {
	case string:
		v = strings.ReplaceAll(v, "{{", "\x00")
		v = strings.ReplaceAll(v, "}}", "{{`}}`}}")
		return strings.ReplaceAll(v, "\x00", "{{`{{`}}")
	case map[string]any:
		for k, x := range v {
			v[k] = escapeTemplates(x)
		}
	case []any:
		for i, x := range v {
			v[i] = escapeTemplates(x)
		}
	}
	return v
}
