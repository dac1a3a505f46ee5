//go:build tools

// Package tools pins prometheus-operator (Apache-2.0) and its config reloader: make
// prometheus-up runs them on the local cluster so that the ServiceMonitor and PrometheusRule
// each operator ships are consumed as kube-prometheus-stack users have them.
package tools

import (
	_ "github.com/prometheus-operator/prometheus-operator/cmd/operator"
	_ "github.com/prometheus-operator/prometheus-operator/cmd/prometheus-config-reloader"
)
