package status

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/quintet-operators/quintet/shared/conditions"
)

// conditionStatuses are the values a condition's status takes; each has a series.
var conditionStatuses = []string{"True", "False", "Unknown"}

// conditionGauge says every condition of every object the operators reconcile, as
// kube-state-metrics says a pod's: 1 on the series of its current status, 0 on the other two,
// so that `quintet_resource_condition{type="Ready",status="True"} == 0` finds what is not
// Ready. Its labels are bounded: the object, the condition type, three statuses.
var conditionGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "quintet_resource_condition",
	Help: "A condition of a custom resource: 1 for its current status (True, False or Unknown), 0 for the other two.",
}, []string{"kind", namespaceLabel, nameLabel, "type", "status"})

func init() { ctrlmetrics.Registry.MustRegister(conditionGauge) }

// conditionSeries are the condition series of each object, by kind and name.
var conditionSeries Series[conditionKey]

type conditionKey struct {
	kind string
	types.NamespacedName
}

// WithConditionMetrics exports obj's conditions as quintet_resource_condition{kind=kind}
// whenever Patch runs (every pass, changed or not). A controller calls ForgetConditions when
// the object is gone.
func WithConditionMetrics(kind string) Option {
	return func(p *Patcher) { p.kind = kind }
}

// recordConditions sets the series of obj's conditions; those of types it lost go.
func recordConditions(kind string, obj conditions.Object) {
	key := conditionKey{kind, types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}}
	samples := make([]Sample, 0, len(obj.GetConditions())*len(conditionStatuses))
	for _, c := range obj.GetConditions() {
		for _, s := range conditionStatuses {
			value := 0.0
			if string(c.Status) == s {
				value = 1
			}
			samples = append(samples, Sample{conditionGauge, []string{kind, key.Namespace, key.Name, c.Type, s}, value})
		}
	}
	conditionSeries.Set(key, samples)
}

// ForgetConditions drops the series of an object that is gone (its Get found nothing).
func ForgetConditions(kind string, name types.NamespacedName) {
	conditionSeries.Forget(conditionKey{kind, name})
}
