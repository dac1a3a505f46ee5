package gordon

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/quintet-operators/quintet/operators/gordon/api/v1"
	"github.com/quintet-operators/quintet/shared/conditions"
)

// syncResult is what the phases of one pass did, for the status.
type syncResult struct {
	createErr error
	deleteErr error
}

// setStatus computes g's status from its active pods and the outcome of this pass. It is
// pure: the deferred patch in Reconcile writes it, and only when it changed.
func setStatus(g *v1.Gordon, active []corev1.Pod, res syncResult) {
	desired := g.DesiredReplicas()
	names := make([]string, 0, len(active))
	ready := 0
	for i := range active {
		names = append(names, active[i].Name)
		if isPodReady(&active[i]) {
			ready++
		}
	}
	slices.Sort(names)

	g.Status.ObservedGeneration = g.Generation
	g.Status.Replicas = int32(len(active)) //nolint:gosec // bounded by the CRD's maximum of replicas
	g.Status.ReadyReplicas = int32(ready)  //nolint:gosec // ready <= len(active)
	g.Status.Pods = names
	g.Status.Selector = selector(g)

	have := g.Status.Replicas
	switch {
	case have < desired:
		conditions.Set(g, v1.ProgressingCondition, metav1.ConditionTrue, v1.ReasonScalingUp,
			fmt.Sprintf("%d of %d pods exist", have, desired))
	case have > desired:
		conditions.Set(g, v1.ProgressingCondition, metav1.ConditionTrue, v1.ReasonScalingDown,
			fmt.Sprintf("%d pods exist, %d desired", have, desired))
	case g.Status.ReadyReplicas < desired:
		conditions.Set(g, v1.ProgressingCondition, metav1.ConditionTrue, v1.ReasonPodsNotReady,
			fmt.Sprintf("%d of %d pods are Ready", g.Status.ReadyReplicas, desired))
	default:
		conditions.Set(g, v1.ProgressingCondition, metav1.ConditionFalse, v1.ReasonStable,
			fmt.Sprintf("%d pods, all Ready", desired))
	}

	if have == desired && g.Status.ReadyReplicas == desired {
		conditions.Set(g, v1.ReadyCondition, metav1.ConditionTrue, v1.ReasonAllPodsReady,
			fmt.Sprintf("%d of %d pods are Ready", desired, desired))
	} else {
		reason := conditions.Get(g, v1.ProgressingCondition).Reason
		conditions.Set(g, v1.ReadyCondition, metav1.ConditionFalse, reason,
			fmt.Sprintf("%d of %d pods are Ready", g.Status.ReadyReplicas, desired))
	}

	switch {
	case res.createErr != nil:
		conditions.Set(g, v1.DegradedCondition, metav1.ConditionTrue, v1.ReasonPodCreateFailed, res.createErr.Error())
	case res.deleteErr != nil:
		conditions.Set(g, v1.DegradedCondition, metav1.ConditionTrue, v1.ReasonPodDeleteFailed, res.deleteErr.Error())
	default:
		conditions.Set(g, v1.DegradedCondition, metav1.ConditionFalse, v1.ReasonAsExpected, "Pods are created and deleted as expected")
	}
}
