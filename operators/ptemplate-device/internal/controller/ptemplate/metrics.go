package ptemplate

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	v1alpha "github.com/quintet-operators/quintet/operators/ptemplate-device/api/v1alpha"
	"github.com/quintet-operators/quintet/shared/status"
)

// metricLabels identify a Ptemplate: every series has its namespace and name, and no other label.
var metricLabels = []string{"namespace", "name"}

// What each Ptemplate's status says, as Prometheus metrics on the manager's /metrics. The spec
// has no number of consumers to compare with: the consumer DaemonSet runs one per node that
// has the module loaded.
var (
	consumerPods = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_ptemplate_consumers",
		Help: "Consumer pods of a Ptemplate (not terminating).",
	}, metricLabels)
	readyConsumerPods = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_ptemplate_ready_consumers",
		Help: "Consumer pods of a Ptemplate that are Ready.",
	}, metricLabels)
	moduleReady = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_ptemplate_module_ready",
		Help: "1 when KMM reports a Ptemplate's kernel module loaded on at least one node (its readiness label, status.nodes), else 0.",
	}, metricLabels)
	moduleNodes = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_ptemplate_module_nodes",
		Help: "Nodes where KMM reports a Ptemplate's kernel module loaded (status.nodes).",
	}, metricLabels)
)

func init() {
	status.MustRegister(exported)
}

// ptemplateSamples are the series of pt's status. It is pure.
func ptemplateSamples(pt *v1alpha.Ptemplate) []status.Sample {
	of := func(g *status.Gauge, value int) status.Sample {
		return status.Sample{Gauge: g, Labels: []string{pt.Namespace, pt.Name}, Value: float64(value)}
	}
	loaded := 0
	if len(pt.Status.Nodes) > 0 {
		loaded = 1
	}
	return []status.Sample{
		of(consumerPods, len(pt.Status.Consumers)),
		of(readyConsumerPods, int(pt.Status.ReadyConsumers)),
		of(moduleReady, loaded),
		of(moduleNodes, len(pt.Status.Nodes)),
	}
}

// exported are each Ptemplate's series.
var exported = status.NewSeries[types.NamespacedName](consumerPods, readyConsumerPods, moduleReady, moduleNodes)

// recordPtemplateMetrics exports pt's status.
func recordPtemplateMetrics(pt *v1alpha.Ptemplate) {
	exported.Set(types.NamespacedName{Namespace: pt.Namespace, Name: pt.Name}, ptemplateSamples(pt))
}

// forgetPtemplateMetrics drops the series of a Ptemplate that is gone.
func forgetPtemplateMetrics(key types.NamespacedName) { exported.Forget(key) }
