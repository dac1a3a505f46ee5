package runtimeversion

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
	"github.com/quintet-operators/quintet/shared/conditions"
)

// setWaiting says the version waits for its Runtime: nothing is made until it is there.
func setWaiting(rv *v1alpha1.RuntimeVersion, reason, message string) {
	rv.Status.ObservedGeneration = rv.Generation
	rv.Status.Workflows = workflowSubjects(rv)
	conditions.Set(rv, conditions.ReadyCondition, metav1.ConditionFalse, reason, message)
	conditions.Set(rv, conditions.ProgressingCondition, metav1.ConditionFalse, reason, message)
	conditions.Set(rv, conditions.DegradedCondition, metav1.ConditionFalse, conditions.ReasonAsExpected, "nothing failed: the version waits for its Runtime")
}

// setStatus computes rv's status from its Deployments (by component), the pods that cannot
// run, the Runtime's servers it waits for before it starts, and the pass's error. It is pure.
func setStatus(rv *v1alpha1.RuntimeVersion, deployments map[string]*appsv1.Deployment, podFailures, waiting []string, err error) {
	rv.Status.ObservedGeneration = rv.Generation
	rv.Status.Workflows = workflowSubjects(rv)
	var notReady, rolling []string
	observe := func(component string, want int32) v1alpha1.NodeStatus {
		st := v1alpha1.NodeStatus{Name: component, Replicas: want}
		d := deployments[component]
		if d != nil && d.Status.ObservedGeneration >= d.Generation && ptr.Deref(d.Spec.Replicas, 0) == want {
			st.ReadyReplicas = min(d.Status.ReadyReplicas, d.Status.UpdatedReplicas, want)
		}
		if st.ReadyReplicas < want {
			notReady = append(notReady, fmt.Sprintf("%s %d/%d", component, st.ReadyReplicas, want))
		} else if d != nil && d.Status.Replicas > d.Status.UpdatedReplicas {
			// Ready replicas of the earlier spec still serve while the new ones start.
			rolling = append(rolling, component)
		}
		return st
	}
	held := len(waiting) > 0
	rv.Status.Entrypoint = observe(EntrypointComponent, replicas(rv, held, 1))
	rv.Status.Nodes = make([]v1alpha1.NodeStatus, 0, len(rv.Spec.Nodes))
	for _, n := range rv.Spec.Nodes {
		rv.Status.Nodes = append(rv.Status.Nodes, observe(n.Name, replicas(rv, held, ptr.Deref(n.Replicas, 1))))
	}

	waitMessage := "the entrypoint and nodes start once the Runtime's servers answer their probes: " + strings.Join(waiting, ", ")
	switch {
	case held && rv.Spec.State != v1alpha1.StateStopped:
		conditions.Set(rv, conditions.ProgressingCondition, metav1.ConditionTrue, v1alpha1.ReasonWaitingForDependencies, waitMessage)
	case len(notReady) > 0:
		conditions.Set(rv, conditions.ProgressingCondition, metav1.ConditionTrue, v1alpha1.ReasonNodesNotReady, "ready replicas: "+strings.Join(notReady, ", "))
	case len(rolling) > 0:
		conditions.Set(rv, conditions.ProgressingCondition, metav1.ConditionTrue, v1alpha1.ReasonNodesNotReady,
			"rolling onto the current spec, earlier pods serving meanwhile: "+strings.Join(rolling, ", "))
	default:
		conditions.Set(rv, conditions.ProgressingCondition, metav1.ConditionFalse, conditions.ReasonStable, "every Deployment runs the current spec")
	}
	conditions.SetDegraded(rv, err, podFailures, "every object is made as the spec asks")
	if rv.Spec.State == v1alpha1.StateStopped {
		conditions.SetSummary(rv, metav1.ConditionFalse, v1alpha1.ReasonStopped, "the version is Stopped: every Deployment is scaled to zero")
	} else {
		conditions.SetSummary(rv, metav1.ConditionTrue, conditions.ReasonReady, "the entrypoint and every node are ready")
	}
}
