package gordon

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/quintet-operators/quintet/operators/gordon/api/v1"
	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/pods"
)

// syncResult is what one pass saw and did, for the status.
type syncResult struct {
	current    []corev1.Pod // active pods of the current pod template
	outdated   []corev1.Pod // active pods of an older template
	terminated []corev1.Pod // pods that succeeded or failed
	// replaceAfter is how long the replacement of terminated pods still backs off.
	replaceAfter time.Duration
	createErr    error
	deleteErr    error
}

// setStatus computes g's status from this pass's pods and outcome. It is pure: the deferred
// patch in Reconcile writes it, and only when it changed.
func setStatus(g *v1.Gordon, res syncResult) {
	desired := g.DesiredReplicas()
	active := slices.Concat(res.current, res.outdated)
	names := make([]string, 0, len(active))
	for i := range active {
		names = append(names, active[i].Name)
	}
	slices.Sort(names)

	g.Status.ObservedGeneration = g.Generation
	g.Status.Replicas = int32(len(active))             //nolint:gosec // bounded by the CRD's maximum of replicas
	g.Status.ReadyReplicas = int32(countReady(active)) //nolint:gosec // <= len(active)
	g.Status.UpdatedReplicas = int32(len(res.current)) //nolint:gosec // <= len(active)
	g.Status.Pods = names
	g.Status.Selector = selector(g)

	have, ready := g.Status.Replicas, g.Status.ReadyReplicas
	switch {
	case len(res.outdated) > 0:
		conditions.Set(g, conditions.ProgressingCondition, metav1.ConditionTrue, v1.ReasonRollingUpdate,
			fmt.Sprintf("%d of %d pods run the current pod template, %d outdated", len(res.current), desired, len(res.outdated)))
	case have < desired:
		conditions.Set(g, conditions.ProgressingCondition, metav1.ConditionTrue, v1.ReasonScalingUp,
			fmt.Sprintf("%d of %d pods exist", have, desired))
	case have > desired:
		conditions.Set(g, conditions.ProgressingCondition, metav1.ConditionTrue, v1.ReasonScalingDown,
			fmt.Sprintf("%d pods exist, %d desired", have, desired))
	case ready < desired:
		conditions.Set(g, conditions.ProgressingCondition, metav1.ConditionTrue, v1.ReasonPodsNotReady,
			fmt.Sprintf("%d of %d pods are Ready", ready, desired))
	default:
		conditions.Set(g, conditions.ProgressingCondition, metav1.ConditionFalse, conditions.ReasonStable,
			fmt.Sprintf("%d pods, all Ready", desired))
	}

	// Terminated pods are news only while their replacement backs off.
	var held []corev1.Pod
	if res.replaceAfter > 0 {
		held = res.terminated
	}
	failures := podFailures(active, held)
	switch {
	case res.createErr != nil:
		conditions.Set(g, conditions.DegradedCondition, metav1.ConditionTrue, v1.ReasonPodCreateFailed, res.createErr.Error())
	case res.deleteErr != nil:
		conditions.Set(g, conditions.DegradedCondition, metav1.ConditionTrue, v1.ReasonPodDeleteFailed, res.deleteErr.Error())
	case len(failures) > 0:
		conditions.Set(g, conditions.DegradedCondition, metav1.ConditionTrue, conditions.ReasonPodsFailing, failingMessage(failures, res.replaceAfter > 0))
	default:
		conditions.Set(g, conditions.DegradedCondition, metav1.ConditionFalse, conditions.ReasonAsExpected, "Pods are created and deleted as expected")
	}
	conditions.SetSummary(g, metav1.ConditionTrue, v1.ReasonAllPodsReady, fmt.Sprintf("%d of %d pods are Ready", desired, desired))
}

// podFailures describes, sorted, the pods that terminated and the active pods whose
// container cannot run (pods.Failure).
func podFailures(active, terminated []corev1.Pod) []string {
	var out []string
	for _, p := range terminated {
		out = append(out, fmt.Sprintf("pod %s %s (%s)", p.Name, p.Status.Phase, p.Status.Reason))
	}
	for i := range active {
		if failure := pods.Failure(&active[i]); failure != "" {
			out = append(out, failure)
		}
	}
	slices.Sort(out)
	return out
}

// failingMessage is the Degraded message for these failures: the first few, how many more,
// and whether replacements are backing off.
func failingMessage(failures []string, backingOff bool) string {
	msg := pods.FailureSummary(failures)
	if backingOff {
		msg += fmt.Sprintf("; terminated pods are replaced after a back-off that doubles from %s to %s",
			replacementBackoffInitial, replacementBackoffMax)
	}
	return msg
}
