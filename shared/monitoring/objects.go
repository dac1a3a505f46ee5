// Package monitoring applies an operator's monitoring objects (config/prometheus: its
// ServiceMonitor, its PrometheusRule and its Grafana dashboard's ConfigMap) in the manager's
// own namespace whenever the cluster serves prometheus-operator's kinds.
//
// It is how an OLM install gets them. A bundle cannot carry them for every cluster: OLM
// (v0.41) fails an InstallPlan with an object whose kind the cluster does not serve, so a
// bundle with a ServiceMonitor installs only where prometheus-operator already runs. The CSV
// passes --install-monitoring instead; Helm and kustomize users install the same objects
// themselves (the chart's prometheus values, the config/prometheus component).
package monitoring

import (
	"fmt"
	"io/fs"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// The files of an operator's config/prometheus that the manager applies.
const (
	monitorFile   = "monitor.yaml"
	rulesFile     = "prometheus_rule.yaml"
	dashboardFile = "dashboard.json"
	// DashboardLabel marks the ConfigMaps Grafana's dashboard sidecar loads.
	DashboardLabel = "grafana_dashboard"
)

// Objects are the monitoring objects of the operator named operator, read from fsys (its
// config/prometheus): the ServiceMonitor and PrometheusRule as written, and the dashboard as
// the ConfigMap <operator>-dashboard that config/prometheus's kustomization generates (key
// <operator>.json, labelled grafana_dashboard=1). Their namespaces are left to the caller.
func Objects(fsys fs.FS, operator string) ([]*unstructured.Unstructured, error) {
	var objects []*unstructured.Unstructured
	for _, file := range []string{monitorFile, rulesFile} {
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if u.GetKind() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("%s: not one object with a kind and a name", file)
		}
		objects = append(objects, u)
	}
	dashboard, err := fs.ReadFile(fsys, dashboardFile)
	if err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: operator + "-dashboard", Labels: map[string]string{DashboardLabel: "1"}},
		Data:       map[string]string{operator + ".json": string(dashboard)},
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cm)
	if err != nil {
		return nil, err
	}
	return append(objects, &unstructured.Unstructured{Object: content}), nil
}
