package gordon

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	managedPods = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "quintet_gordon_managed_pods",
		Help: "Pods a Gordon operates (created, not terminating).",
	}, []string{"namespace", "name"})
	readyPods = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "quintet_gordon_ready_pods",
		Help: "Pods of a Gordon that are Ready.",
	}, []string{"namespace", "name"})
)

func init() {
	metrics.Registry.MustRegister(managedPods, readyPods)
}

func recordPodMetrics(namespace, name string, managed, ready int32) {
	managedPods.WithLabelValues(namespace, name).Set(float64(managed))
	readyPods.WithLabelValues(namespace, name).Set(float64(ready))
}

func forgetPodMetrics(namespace, name string) {
	managedPods.DeleteLabelValues(namespace, name)
	readyPods.DeleteLabelValues(namespace, name)
}
