//go:build tools

// Package tools pins Prometheus (Apache-2.0) and promtool: the Prometheus the local cluster
// runs (make prometheus-up) scrapes every manager through its ServiceMonitor and evaluates its
// PrometheusRule, and promtool tests those rules (make test-rules). Built with only the
// Kubernetes service discovery (tags remove_all_sd,enable_kubernetes_sd), as
// prometheus-operator configures it.
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/prometheus"
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
