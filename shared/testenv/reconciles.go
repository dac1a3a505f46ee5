package testenv

import (
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Reconciles is how many passes the named controller has made in this process, as
// controller-runtime counts them (controller_runtime_reconcile_total, every result): a test
// waits for it to grow to know that a change woke the controller.
func Reconciles(controller string) (float64, error) {
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		return 0, err
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controller {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total, nil
}
