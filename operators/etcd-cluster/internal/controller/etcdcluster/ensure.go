package etcdcluster

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
)

// ensure creates desired, controller-owned by c, or brings the fields the operator manages
// up to date. It writes nothing when they already match (server defaults are not a change).
func (r *Reconciler) ensure(ctx context.Context, c *v1beta2.EtcdCluster, desired client.Object) error {
	if err := controllerutil.SetControllerReference(c, desired, r.Scheme()); err != nil {
		return err
	}
	existing := desired.DeepCopyObject().(client.Object)
	if err := r.Get(ctx, client.ObjectKeyFromObject(desired), existing); apierrors.IsNotFound(err) {
		if err := r.Create(ctx, desired); err != nil {
			return fmt.Errorf("creating %T %s: %w", desired, desired.GetName(), err)
		}
		return nil
	} else if err != nil {
		return err
	}
	if !copyManagedFields(desired, existing) {
		return nil
	}
	if err := r.Update(ctx, existing); err != nil {
		return fmt.Errorf("updating %T %s: %w", existing, existing.GetName(), err)
	}
	return nil
}

// copyManagedFields copies what the operator manages from desired into existing, and
// reports whether that changed anything. Immutable fields are left alone.
func copyManagedFields(desired, existing client.Object) bool {
	derivative := equality.Semantic.DeepDerivative
	switch d := desired.(type) {
	case *corev1.Service:
		e := existing.(*corev1.Service)
		if derivative(d.Spec.Ports, e.Spec.Ports) && derivative(d.Spec.Selector, e.Spec.Selector) &&
			d.Spec.PublishNotReadyAddresses == e.Spec.PublishNotReadyAddresses {
			return false
		}
		e.Spec.Ports, e.Spec.Selector, e.Spec.PublishNotReadyAddresses = d.Spec.Ports, d.Spec.Selector, d.Spec.PublishNotReadyAddresses
	case *corev1.ConfigMap:
		e := existing.(*corev1.ConfigMap)
		if equality.Semantic.DeepEqual(d.Data, e.Data) {
			return false
		}
		e.Data = d.Data
	case *policyv1.PodDisruptionBudget:
		e := existing.(*policyv1.PodDisruptionBudget)
		if derivative(d.Spec, e.Spec) {
			return false
		}
		e.Spec.MaxUnavailable, e.Spec.MinAvailable = d.Spec.MaxUnavailable, d.Spec.MinAvailable
	case *appsv1.StatefulSet:
		e := existing.(*appsv1.StatefulSet)
		if derivative(d.Spec.Replicas, e.Spec.Replicas) && derivative(d.Spec.Template, e.Spec.Template) &&
			clearableFieldsEqual(&d.Spec.Template, &e.Spec.Template) {
			return false
		}
		e.Spec.Replicas, e.Spec.Template = d.Spec.Replicas, d.Spec.Template
	default:
		panic(fmt.Sprintf("ensure: no managed fields for %T", desired))
	}
	return true
}

// clearableFieldsEqual compares the template fields the spec may set and later clear:
// DeepDerivative skips what desired leaves unset, so a removed etcd flag, toleration or
// limit would otherwise never leave the StatefulSet. (Semantic equality treats nil and
// empty alike.)
func clearableFieldsEqual(d, e *corev1.PodTemplateSpec) bool {
	eq := equality.Semantic.DeepEqual
	dc, ec := d.Spec.Containers[0], e.Spec.Containers[0]
	return eq(dc.Args, ec.Args) && eq(dc.Resources, ec.Resources) &&
		eq(d.Spec.NodeSelector, e.Spec.NodeSelector) && eq(d.Spec.Tolerations, e.Spec.Tolerations)
}
