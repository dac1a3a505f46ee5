package ensure

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CopyManagedFields copies what an operator manages from desired into existing, and reports
// whether that changed anything. Immutable fields are left alone. DeepDerivative skips unset
// strings, pointers, slices and maps of desired, but not unset numbers: desired objects set
// every number the API server would default (a probe's timeout, ...). Fields the spec may
// set and later clear are compared exactly (see clearableFieldsEqual).
func CopyManagedFields(desired, existing client.Object) (bool, error) {
	derivative := equality.Semantic.DeepDerivative
	eq := equality.Semantic.DeepEqual
	switch d := desired.(type) {
	case *corev1.Service:
		e := existing.(*corev1.Service)
		if derivative(d.Spec.Ports, e.Spec.Ports) && derivative(d.Spec.Selector, e.Spec.Selector) &&
			d.Spec.PublishNotReadyAddresses == e.Spec.PublishNotReadyAddresses {
			return false, nil
		}
		e.Spec.Ports, e.Spec.Selector, e.Spec.PublishNotReadyAddresses = d.Spec.Ports, d.Spec.Selector, d.Spec.PublishNotReadyAddresses
	case *corev1.Secret:
		e := existing.(*corev1.Secret)
		if eq(d.Data, e.Data) {
			return false, nil
		}
		e.Data = d.Data
	case *policyv1.PodDisruptionBudget:
		e := existing.(*policyv1.PodDisruptionBudget)
		if derivative(d.Spec, e.Spec) {
			return false, nil
		}
		e.Spec.MaxUnavailable, e.Spec.MinAvailable = d.Spec.MaxUnavailable, d.Spec.MinAvailable
	case *appsv1.StatefulSet, *appsv1.Deployment, *appsv1.DaemonSet:
		return copyWorkloadFields(desired, existing), nil
	case *unstructured.Unstructured:
		// An object of another operator's API (KMM's Module): its spec is the operator's, key
		// by key at the top; defaults the API server adds further down are not a change.
		e := existing.(*unstructured.Unstructured)
		dSpec, _ := d.Object["spec"].(map[string]any)
		eSpec, _ := e.Object["spec"].(map[string]any)
		if derivative(dSpec, eSpec) && sameKeys(dSpec, eSpec) {
			return false, nil
		}
		e.Object["spec"] = d.Object["spec"]
	case *networkingv1.NetworkPolicy:
		// desired sets what the server defaults (policyTypes, each port's protocol): the
		// spec is compared exactly, so a peer or port the spec dropped leaves the policy.
		e := existing.(*networkingv1.NetworkPolicy)
		if eq(d.Spec, e.Spec) {
			return false, nil
		}
		e.Spec = d.Spec
	case *networkingv1.Ingress:
		e := existing.(*networkingv1.Ingress)
		if derivative(d.Spec, e.Spec) && eq(d.Spec.Rules, e.Spec.Rules) {
			return false, nil
		}
		e.Spec = d.Spec
	default:
		return false, fmt.Errorf("ensure: no managed fields are known for %T", desired)
	}
	return true, nil
}

// copyWorkloadFields is CopyManagedFields for StatefulSets, Deployments and DaemonSets.
func copyWorkloadFields(desired, existing client.Object) bool {
	derivative := equality.Semantic.DeepDerivative
	eq := equality.Semantic.DeepEqual
	switch d := desired.(type) {
	case *appsv1.StatefulSet:
		e := existing.(*appsv1.StatefulSet)
		if derivative(d.Spec.Replicas, e.Spec.Replicas) && derivative(d.Spec.Template, e.Spec.Template) &&
			clearableFieldsEqual(&d.Spec.Template, &e.Spec.Template) && eq(d.Spec.UpdateStrategy, e.Spec.UpdateStrategy) &&
			eq(d.Spec.PersistentVolumeClaimRetentionPolicy, e.Spec.PersistentVolumeClaimRetentionPolicy) {
			return false
		}
		e.Spec.Replicas, e.Spec.Template, e.Spec.UpdateStrategy = d.Spec.Replicas, d.Spec.Template, d.Spec.UpdateStrategy
		e.Spec.PersistentVolumeClaimRetentionPolicy = d.Spec.PersistentVolumeClaimRetentionPolicy
	case *appsv1.Deployment:
		e := existing.(*appsv1.Deployment)
		if derivative(d.Spec.Replicas, e.Spec.Replicas) && derivative(d.Spec.Template, e.Spec.Template) &&
			clearableFieldsEqual(&d.Spec.Template, &e.Spec.Template) {
			return false
		}
		e.Spec.Replicas, e.Spec.Template = d.Spec.Replicas, d.Spec.Template
	case *appsv1.DaemonSet:
		e := existing.(*appsv1.DaemonSet)
		if derivative(d.Spec.Template, e.Spec.Template) && clearableFieldsEqual(&d.Spec.Template, &e.Spec.Template) &&
			eq(d.Spec.Template.Spec.ImagePullSecrets, e.Spec.Template.Spec.ImagePullSecrets) {
			return false
		}
		e.Spec.Template = d.Spec.Template
	}
	return true
}

// clearableFieldsEqual compares the template fields a spec may set and later clear:
// DeepDerivative skips what desired leaves unset, so a removed flag, variable, toleration,
// limit or affinity would otherwise never leave the workload. (Semantic equality treats nil
// and empty alike.) A template without its containers is not equal: the update restores them.
func clearableFieldsEqual(d, e *corev1.PodTemplateSpec) bool {
	if len(d.Spec.Containers) != len(e.Spec.Containers) {
		return false
	}
	eq := equality.Semantic.DeepEqual
	for i := range d.Spec.Containers {
		dc, ec := d.Spec.Containers[i], e.Spec.Containers[i]
		if !eq(dc.Args, ec.Args) || !eq(dc.Env, ec.Env) || !eq(dc.Resources, ec.Resources) {
			return false
		}
	}
	return eq(d.Spec.NodeSelector, e.Spec.NodeSelector) && eq(d.Spec.Tolerations, e.Spec.Tolerations) &&
		eq(d.Spec.Affinity, e.Spec.Affinity)
}

// sameKeys: a and b have the same keys (a field the spec cleared leaves the object too).
func sameKeys(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}
