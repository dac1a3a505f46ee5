package gordon

import (
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/quintet-operators/quintet/operators/gordon/api/v1"
	"github.com/quintet-operators/quintet/shared/status"
)

// gordonLabels are the labels every gauge has: the Gordon's namespace and name.
var gordonLabels = []string{"namespace", "name"}

// What the operator knows of each Gordon's pods, as Prometheus metrics on the manager's
// /metrics. Labels are bounded: the Gordon, and for the counter one of replacedReasons.
var (
	desiredPods = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_gordon_desired_pods",
		Help: "Pods a Gordon asks for (spec.gordon.replicas).",
	}, gordonLabels)
	managedPods = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_gordon_managed_pods",
		Help: "Pods a Gordon operates (created, not terminating).",
	}, gordonLabels)
	readyPods = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_gordon_ready_pods",
		Help: "Pods of a Gordon that are Ready.",
	}, gordonLabels)
	updatedPods = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_gordon_updated_pods",
		Help: "Pods of a Gordon that run its current pod template (status.updatedReplicas): a rollout's progress.",
	}, gordonLabels)
	podsReplaced = status.NewCounter(prometheus.CounterOpts{
		Name: "quintet_gordon_pods_replaced_total",
		Help: "Pods of a Gordon the operator deleted, by reason: failed or succeeded (terminated, replaced), outdated (a rollout), excess (a scale-down).",
	}, "reason", replacedFailed, replacedSucceeded, replacedOutdated, replacedExcess)
)

// Why the operator deleted a pod: the reason label of quintet_gordon_pods_replaced_total.
const (
	// replacedFailed: the pod terminated in phase Failed (evicted, rejected by the kubelet, ...).
	replacedFailed = "failed"
	// replacedSucceeded: the pod terminated in phase Succeeded.
	replacedSucceeded = "succeeded"
	// replacedOutdated: an active pod of an older pod template, deleted by a rollout (or by a
	// scale-down during one, which deletes outdated pods first).
	replacedOutdated = "outdated"
	// replacedExcess: an active pod of the current template beyond replicas, deleted by a
	// scale-down (not replaced).
	replacedExcess = "excess"
)

func init() {
	status.MustRegister(exported, podsReplaced)
}

// gordonSamples are the gauge series of g's spec and status. It is pure.
func gordonSamples(g *v1.Gordon) []status.Sample {
	of := func(gauge *status.Gauge, value int32) status.Sample {
		return status.Sample{Gauge: gauge, Labels: []string{g.Namespace, g.Name}, Value: float64(value)}
	}
	return []status.Sample{
		of(desiredPods, g.DesiredReplicas()),
		of(managedPods, g.Status.Replicas),
		of(readyPods, g.Status.ReadyReplicas),
		of(updatedPods, g.Status.UpdatedReplicas),
	}
}

// terminatedReason is the reason of a terminated pod's deletion: its phase. It is pure.
func terminatedReason(p *corev1.Pod) string {
	if p.Status.Phase == corev1.PodSucceeded {
		return replacedSucceeded
	}
	return replacedFailed
}

// planReason is why a plan deletes the active pod p when the current pod template hashes to
// hash. It is pure.
func planReason(p *corev1.Pod, hash string) string {
	if p.Labels[v1.TemplateHashLabel] != hash {
		return replacedOutdated
	}
	return replacedExcess
}

// exported are each Gordon's gauge series.
var exported = status.NewSeries[types.NamespacedName](desiredPods, managedPods, readyPods, updatedPods)

// recordGordonMetrics exports g's spec and status, and starts its counter at 0 for every
// reason, so that the first deletion of each shows as an increase.
func recordGordonMetrics(g *v1.Gordon) {
	exported.Set(types.NamespacedName{Namespace: g.Namespace, Name: g.Name}, gordonSamples(g))
	podsReplaced.Start(g.Namespace, g.Name)
}

// countReplaced counts a pod of g the operator deleted, for reason.
func countReplaced(g *v1.Gordon, reason string) {
	podsReplaced.Add(g.Namespace, g.Name, 1, reason)
}

// forgetGordonMetrics drops every series of a Gordon that is gone, its counters included.
func forgetGordonMetrics(key types.NamespacedName) {
	exported.Forget(key)
	podsReplaced.Forget(key.Namespace, key.Name)
}
