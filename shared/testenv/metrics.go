package testenv

import (
	dto "github.com/prometheus/client_model/go"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/quintet-operators/quintet/shared/internal/exposition"
)

// Sample is one series of a metric: its labels and its value (a gauge's or a counter's).
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Series are the series of the metric name a manager's /metrics serves (controller-runtime's
// registry and shared/status's collectors, scraped and parsed) whose labels include match: a
// test reads what its own objects export, whatever the package's other tests export beside them.
func Series(name string, match map[string]string) ([]Sample, error) {
	families, err := exposition.Families(crmetrics.Registry)
	if err != nil {
		return nil, err
	}
	var out []Sample
	if f, ok := families[name]; ok {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if matches(labels, match) {
				out = append(out, Sample{Labels: labels, Value: value(m)})
			}
		}
	}
	return out, nil
}

// matches: labels has every label of match, with its value.
func matches(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func value(m *dto.Metric) float64 {
	if m.GetCounter() != nil {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

// Reconciles is how many passes the named controller has made in this process, as
// controller-runtime counts them (controller_runtime_reconcile_total, every result): a test
// waits for it to grow to know that a change woke the controller.
func Reconciles(controller string) (float64, error) {
	series, err := Series("controller_runtime_reconcile_total", map[string]string{"controller": controller})
	total := 0.0
	for _, s := range series {
		total += s.Value
	}
	return total, err
}
