package etcdcluster

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
)

// notOwnedError: an object the cluster needs exists, but the cluster does not control it.
// The operator neither adopts nor overwrites it; the user deletes or renames it.
type notOwnedError struct {
	kind, name string
	controller string // who controls it, if anyone
}

func (e *notOwnedError) Error() string {
	return fmt.Sprintf("%s %s already exists and %s: the operator neither adopts nor overwrites it; delete or rename it",
		e.kind, e.name, e.controller)
}

// ensure creates desired, controller-owned by c, or brings the fields the operator manages
// up to date. It writes nothing when they already match (server defaults are not a change),
// logs one line per write, and refuses (notOwnedError) an object of that name c does not control.
func (r *Reconciler) ensure(ctx context.Context, c *v1beta2.EtcdCluster, desired client.Object) error {
	gvk, err := r.GroupVersionKindFor(desired)
	if err != nil {
		return err
	}
	kind := gvk.Kind
	if err := controllerutil.SetControllerReference(c, desired, r.Scheme()); err != nil {
		return err
	}
	log := ctrl.LoggerFrom(ctx).WithValues(kind, klog.KObj(desired))
	existing := desired.DeepCopyObject().(client.Object)
	err = r.Get(ctx, client.ObjectKeyFromObject(desired), existing)
	if apierrors.IsNotFound(err) {
		log.Info("Creating " + kind)
		if err = r.Create(ctx, desired); !apierrors.IsAlreadyExists(err) {
			return writeError("creating", kind, desired, err)
		}
		// The cache holds only objects labelled for a cluster: either it has not yet seen
		// what an earlier pass created, or the object is someone else's. The API server says.
		err = r.apiReader().Get(ctx, client.ObjectKeyFromObject(desired), existing)
	}
	if err != nil {
		return fmt.Errorf("reading %s %s: %w", kind, desired.GetName(), err)
	}
	if !metav1.IsControlledBy(existing, c) {
		return &notOwnedError{kind: kind, name: desired.GetName(), controller: controlledBy(existing)}
	}
	changed, err := copyManagedFields(desired, existing)
	if err != nil || !changed {
		return err
	}
	log.Info("Updating " + kind)
	return writeError("updating", kind, existing, r.Update(ctx, existing))
}

// controlledBy says who controls obj, for notOwnedError.
func controlledBy(obj client.Object) string {
	if ref := metav1.GetControllerOf(obj); ref != nil {
		return fmt.Sprintf("is controlled by %s %s (uid %s)", ref.Kind, ref.Name, ref.UID)
	}
	return "is controlled by no EtcdCluster"
}

// writeError wraps a failed write. The API server's Invalid is terminal: the object is built
// from the spec, so the same spec fails again; the cluster waits in Degraded for a new spec.
func writeError(verb, kind string, obj client.Object, err error) error {
	if err == nil {
		return nil
	}
	err = fmt.Errorf("%s %s %s: %w", verb, kind, obj.GetName(), err)
	if apierrors.IsInvalid(err) {
		return reconcile.TerminalError(err)
	}
	return err
}

// copyManagedFields copies what the operator manages from desired into existing, and
// reports whether that changed anything. Immutable fields are left alone. DeepDerivative
// skips unset strings, pointers, slices and maps of desired, but not unset numbers: desired
// objects set every number the API server would default (a probe's timeout, ...).
func copyManagedFields(desired, existing client.Object) (bool, error) {
	derivative := equality.Semantic.DeepDerivative
	switch d := desired.(type) {
	case *corev1.Service:
		e := existing.(*corev1.Service)
		if derivative(d.Spec.Ports, e.Spec.Ports) && derivative(d.Spec.Selector, e.Spec.Selector) &&
			d.Spec.PublishNotReadyAddresses == e.Spec.PublishNotReadyAddresses {
			return false, nil
		}
		e.Spec.Ports, e.Spec.Selector, e.Spec.PublishNotReadyAddresses = d.Spec.Ports, d.Spec.Selector, d.Spec.PublishNotReadyAddresses
	case *policyv1.PodDisruptionBudget:
		e := existing.(*policyv1.PodDisruptionBudget)
		if derivative(d.Spec, e.Spec) {
			return false, nil
		}
		e.Spec.MaxUnavailable, e.Spec.MinAvailable = d.Spec.MaxUnavailable, d.Spec.MinAvailable
	case *appsv1.StatefulSet:
		e := existing.(*appsv1.StatefulSet)
		eq := equality.Semantic.DeepEqual
		if derivative(d.Spec.Replicas, e.Spec.Replicas) && derivative(d.Spec.Template, e.Spec.Template) &&
			clearableFieldsEqual(&d.Spec.Template, &e.Spec.Template) && eq(d.Spec.UpdateStrategy, e.Spec.UpdateStrategy) &&
			eq(d.Spec.PersistentVolumeClaimRetentionPolicy, e.Spec.PersistentVolumeClaimRetentionPolicy) {
			return false, nil
		}
		e.Spec.Replicas, e.Spec.Template, e.Spec.UpdateStrategy = d.Spec.Replicas, d.Spec.Template, d.Spec.UpdateStrategy
		e.Spec.PersistentVolumeClaimRetentionPolicy = d.Spec.PersistentVolumeClaimRetentionPolicy
	default:
		return false, fmt.Errorf("ensure: the operator manages no fields of %T", desired)
	}
	return true, nil
}

// clearableFieldsEqual compares the template fields the spec may set and later clear:
// DeepDerivative skips what desired leaves unset, so a removed etcd flag, toleration or
// limit, compaction setting or anti-affinity would otherwise never leave the StatefulSet. (Semantic equality treats nil and
// empty alike.) A template without its container is not equal: the update restores it.
func clearableFieldsEqual(d, e *corev1.PodTemplateSpec) bool {
	if len(d.Spec.Containers) == 0 || len(e.Spec.Containers) == 0 {
		return len(d.Spec.Containers) == len(e.Spec.Containers)
	}
	eq := equality.Semantic.DeepEqual
	dc, ec := d.Spec.Containers[0], e.Spec.Containers[0]
	return eq(dc.Args, ec.Args) && eq(dc.Env, ec.Env) && eq(dc.Resources, ec.Resources) &&
		eq(d.Spec.NodeSelector, e.Spec.NodeSelector) && eq(d.Spec.Tolerations, e.Spec.Tolerations) &&
		eq(d.Spec.Affinity, e.Spec.Affinity)
}
