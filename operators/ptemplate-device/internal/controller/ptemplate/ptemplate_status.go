package ptemplate

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha "github.com/quintet-operators/quintet/operators/ptemplate-device/api/v1alpha"
	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/ensure"
	"github.com/quintet-operators/quintet/shared/podfailure"
)

// setKMMNotInstalled says the Ptemplate waits for KMM: nothing is made until it is there.
func setKMMNotInstalled(pt *v1alpha.Ptemplate) {
	pt.Status.ObservedGeneration = pt.Generation
	msg := fmt.Sprintf("the cluster does not serve %s (CRD modules.%s): install Kernel Module Management; the Ptemplate proceeds once it is there",
		moduleGVK.GroupVersion().WithKind(moduleGVK.Kind), moduleGVK.Group)
	conditions.Set(pt, v1alpha.ReadyCondition, metav1.ConditionFalse, v1alpha.ReasonKMMNotInstalled, msg)
	conditions.Set(pt, v1alpha.ProgressingCondition, metav1.ConditionFalse, v1alpha.ReasonKMMNotInstalled, msg)
	conditions.Set(pt, v1alpha.DegradedCondition, metav1.ConditionFalse, v1alpha.ReasonAsExpected, "nothing failed: the Ptemplate waits for KMM")
}

// setStatus computes pt's status from what the pass saw and its error. It is pure.
func setStatus(pt *v1alpha.Ptemplate, seen observed, err error) {
	st := &pt.Status
	st.ObservedGeneration = pt.Generation
	st.Consumers, st.ReadyConsumers = nil, 0
	var failures []string
	for i := range seen.pods {
		p := &seen.pods[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		st.Consumers = append(st.Consumers, p.Name)
		if podReady(p) {
			st.ReadyConsumers++
		}
		if f := podfailure.Of(p); f != "" {
			failures = append(failures, f)
		}
	}
	slices.Sort(st.Consumers)
	slices.Sort(failures)
	st.Nodes = slices.Sorted(slices.Values(seen.nodes))

	ds, desired := seen.daemonSet, int32(0)
	settled := ds != nil && ds.Status.ObservedGeneration >= ds.Generation
	if ds != nil {
		desired = ds.Status.DesiredNumberScheduled
	}
	switch {
	case !settled:
		conditions.Set(pt, v1alpha.ProgressingCondition, metav1.ConditionTrue, v1alpha.ReasonConsumersNotReady,
			"the consumer DaemonSet has not seen its current spec yet")
	case ds.Status.UpdatedNumberScheduled < desired || ds.Status.NumberReady < desired:
		conditions.Set(pt, v1alpha.ProgressingCondition, metav1.ConditionTrue, v1alpha.ReasonConsumersNotReady,
			fmt.Sprintf("consumers: %d of %d ready, %d on the current spec", ds.Status.NumberReady, desired, ds.Status.UpdatedNumberScheduled))
	default:
		conditions.Set(pt, v1alpha.ProgressingCondition, metav1.ConditionFalse, v1alpha.ReasonStable, "every consumer runs the current spec")
	}
	setDegraded(pt, err, failures)

	switch progressing := conditions.Get(pt, v1alpha.ProgressingCondition); {
	case conditions.IsTrue(pt, v1alpha.DegradedCondition):
		d := conditions.Get(pt, v1alpha.DegradedCondition)
		conditions.Set(pt, v1alpha.ReadyCondition, metav1.ConditionFalse, d.Reason, d.Message)
	case progressing.Status == metav1.ConditionTrue:
		conditions.Set(pt, v1alpha.ReadyCondition, metav1.ConditionFalse, progressing.Reason, progressing.Message)
	case len(st.Nodes) == 0 || desired == 0:
		conditions.Set(pt, v1alpha.ReadyCondition, metav1.ConditionFalse, v1alpha.ReasonModuleNotLoaded,
			fmt.Sprintf("no node matching the selector has kernel module %s loaded yet (KMM labels such nodes %s)",
				pt.Spec.KernelModule.Name, ModuleReadyLabel(pt.Namespace, pt.Name)))
	default:
		conditions.Set(pt, v1alpha.ReadyCondition, metav1.ConditionTrue, v1alpha.ReasonReady,
			fmt.Sprintf("%d consumers ready, each with %d %s, on nodes with the module loaded: %s",
				st.ReadyConsumers, pt.Spec.RequiredDevices, pt.Spec.ResourceName, strings.Join(st.Nodes, ", ")))
	}
}

// setDegraded sets the Degraded condition from what stopped the pass, if anything (an object
// of someone else's, an object the API server rejected, another failure), else from the
// consumer pods that cannot run.
func setDegraded(pt *v1alpha.Ptemplate, err error, failures []string) {
	reason := v1alpha.ReasonReconcileFailed
	switch _, notOwned := ensure.IsNotOwned(err); {
	case err == nil && len(failures) > 0:
		conditions.Set(pt, v1alpha.DegradedCondition, metav1.ConditionTrue, v1alpha.ReasonPodsFailing, podfailure.Summary(failures))
		return
	case err == nil:
		conditions.Set(pt, v1alpha.DegradedCondition, metav1.ConditionFalse, v1alpha.ReasonAsExpected, "the Module and the consumer DaemonSet are as the spec asks")
		return
	case notOwned:
		reason = v1alpha.ReasonObjectNotOwned
	case errors.Is(err, reconcile.TerminalError(nil)):
		reason = v1alpha.ReasonObjectRejected
	}
	conditions.Set(pt, v1alpha.DegradedCondition, metav1.ConditionTrue, reason, err.Error())
}

func podReady(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
		return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
	})
}
