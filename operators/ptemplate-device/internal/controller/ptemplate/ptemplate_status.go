package ptemplate

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha "github.com/quintet-operators/quintet/operators/ptemplate-device/api/v1alpha"
	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/pods"
)

// setKMMNotInstalled says the Ptemplate waits for KMM: nothing is made until it is there.
func setKMMNotInstalled(pt *v1alpha.Ptemplate) {
	pt.Status.ObservedGeneration = pt.Generation
	msg := fmt.Sprintf("the cluster does not serve %s (CRD modules.%s): install Kernel Module Management; the Ptemplate proceeds once it is there",
		moduleGVK.GroupVersion().WithKind(moduleGVK.Kind), moduleGVK.Group)
	conditions.Set(pt, conditions.ReadyCondition, metav1.ConditionFalse, v1alpha.ReasonKMMNotInstalled, msg)
	conditions.Set(pt, conditions.ProgressingCondition, metav1.ConditionFalse, v1alpha.ReasonKMMNotInstalled, msg)
	conditions.Set(pt, conditions.DegradedCondition, metav1.ConditionFalse, conditions.ReasonAsExpected, "nothing failed: the Ptemplate waits for KMM")
}

// setNotAllowed says the policy refuses pt's spec: nothing is written.
func setNotAllowed(pt *v1alpha.Ptemplate, refusal string) {
	pt.Status.ObservedGeneration = pt.Generation
	conditions.Set(pt, conditions.ReadyCondition, metav1.ConditionFalse, v1alpha.ReasonModuleNotAllowed, refusal)
	conditions.Set(pt, conditions.ProgressingCondition, metav1.ConditionFalse, v1alpha.ReasonModuleNotAllowed,
		"nothing is written until the spec asks for what the operator allows")
	conditions.Set(pt, conditions.DegradedCondition, metav1.ConditionTrue, v1alpha.ReasonModuleNotAllowed, refusal)
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
		if pods.Ready(p) {
			st.ReadyConsumers++
		}
		if f := pods.Failure(p); f != "" {
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
		conditions.Set(pt, conditions.ProgressingCondition, metav1.ConditionTrue, v1alpha.ReasonConsumersNotReady,
			"the consumer DaemonSet has not seen its current spec yet")
	case ds.Status.UpdatedNumberScheduled < desired || ds.Status.NumberReady < desired:
		conditions.Set(pt, conditions.ProgressingCondition, metav1.ConditionTrue, v1alpha.ReasonConsumersNotReady,
			fmt.Sprintf("consumers: %d of %d ready, %d on the current spec", ds.Status.NumberReady, desired, ds.Status.UpdatedNumberScheduled))
	default:
		conditions.Set(pt, conditions.ProgressingCondition, metav1.ConditionFalse, conditions.ReasonStable, "every consumer runs the current spec")
	}
	conditions.SetDegraded(pt, err, failures, "the Module and the consumer DaemonSet are as the spec asks")
	if len(st.Nodes) == 0 || desired == 0 {
		conditions.SetSummary(pt, metav1.ConditionFalse, v1alpha.ReasonModuleNotLoaded,
			fmt.Sprintf("no node matching the selector has kernel module %s loaded yet (KMM labels such nodes %s)",
				pt.Spec.KernelModule.Name, ModuleReadyLabel(pt.Namespace, pt.Name)))
		return
	}
	conditions.SetSummary(pt, metav1.ConditionTrue, conditions.ReasonReady,
		fmt.Sprintf("%d consumers ready, each with %d %s, on nodes with the module loaded: %s",
			st.ReadyConsumers, pt.Spec.RequiredDevices, pt.Spec.ResourceName, strings.Join(st.Nodes, ", ")))
}
