package ptemplate

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	v1alpha "github.com/quintet-operators/quintet/operators/ptemplate-device/api/v1alpha"
)

// metricLabels identify a Ptemplate.
var metricLabels = []string{"namespace", "name"}

var (
	consumerPods = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "quintet_ptemplate_consumers",
		Help: "Consumer pods of a Ptemplate (not terminating).",
	}, metricLabels)
	readyConsumerPods = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "quintet_ptemplate_ready_consumers",
		Help: "Consumer pods of a Ptemplate that are Ready.",
	}, metricLabels)
)

func init() {
	metrics.Registry.MustRegister(consumerPods, readyConsumerPods)
}

func recordMetrics(pt *v1alpha.Ptemplate) {
	consumerPods.WithLabelValues(pt.Namespace, pt.Name).Set(float64(len(pt.Status.Consumers)))
	readyConsumerPods.WithLabelValues(pt.Namespace, pt.Name).Set(float64(pt.Status.ReadyConsumers))
}

func forgetMetrics(namespace, name string) {
	consumerPods.DeleteLabelValues(namespace, name)
	readyConsumerPods.DeleteLabelValues(namespace, name)
}
