// Package runtimeversion reconciles RuntimeVersions: an entrypoint Deployment and Service and
// one Deployment per node, wired to their Runtime's NATS, MongoDB and MinIO.
package runtimeversion

import (
	"context"
	"errors"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
	"github.com/quintet-operators/quintet/operators/kre-runtime/internal/controller/kreruntime"
	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/ensure"
	"github.com/quintet-operators/quintet/shared/status"
)

// runtimeRefField indexes RuntimeVersions by the Runtime they name.
const runtimeRefField = "spec.runtimeRef.name"

// Reconciler runs each RuntimeVersion's Deployments.
type Reconciler struct {
	client.Client
	// APIReader reads past the cache, which holds only objects labelled for a version.
	APIReader client.Reader
	Recorder  recorder.EventRecorder

	transitions conditions.Transitions
	// checked remembers the Services found as wanted: the cache holds Services as metadata.
	checked *ensure.CheckedVersions
}

// +kubebuilder:rbac:groups=kre.konstellation.io,resources=runtimeversions,verbs=get;list;watch
// +kubebuilder:rbac:groups=kre.konstellation.io,resources=runtimeversions/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kre.konstellation.io,resources=runtimeversions/finalizers,verbs=update
// +kubebuilder:rbac:groups=kre.konstellation.io,resources=runtimes,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups="",resources=pods,verbs=list
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one RuntimeVersion's Deployments to its spec and reports them in its status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, reterr error) {
	rv := &v1alpha1.RuntimeVersion{}
	if err := r.Get(ctx, req.NamespacedName, rv); err != nil {
		if apierrors.IsNotFound(err) {
			r.transitions.Forget(req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !rv.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // its Deployments and Service go with it (owner references)
	}
	patcher := status.NewPatcher(rv, status.WithEvents(r.Recorder, &r.transitions, conditions.DegradedCondition))
	defer func() { res, reterr = patcher.Finish(ctx, r.Client, rv, res, reterr) }()
	ctx, changes := ensure.WithChangeSet(ctx) // one Event per reason of what the pass wrote
	defer changes.Record(r.Recorder, rv)
	return r.reconcileNormal(ctx, rv)
}

// reconcileNormal waits for the Runtime, makes the Deployments and Service, computes status.
func (r *Reconciler) reconcileNormal(ctx context.Context, rv *v1alpha1.RuntimeVersion) (ctrl.Result, error) {
	rt := &v1alpha1.Runtime{}
	err := r.Get(ctx, client.ObjectKey{Namespace: rv.Namespace, Name: rv.Spec.RuntimeRef.Name}, rt)
	switch {
	case apierrors.IsNotFound(err):
		setWaiting(rv, v1alpha1.ReasonRuntimeNotFound, "Runtime "+rv.Spec.RuntimeRef.Name+" does not exist (yet): the version starts once it does")
		return ctrl.Result{}, nil // the Runtime's creation wakes us
	case err != nil:
		return ctrl.Result{}, err
	case rt.Status.Mongo.CredentialsSecret == "" || rt.Status.MinIO.CredentialsSecret == "":
		setWaiting(rv, v1alpha1.ReasonRuntimeNotReady, "Runtime "+rt.Name+" has not reported its credentials Secrets yet")
		return ctrl.Result{}, nil // its status update wakes us
	}
	existing, err := r.deployments(ctx, rv)
	if err != nil {
		return ctrl.Result{}, err
	}
	var waiting []string // the Runtime's servers a starting version waits for
	if !started(existing) {
		waiting = dependenciesNotReady(rt)
	}
	err = r.reconcileDeployments(ctx, rv, rt, len(waiting) > 0)
	deployments, listErr := r.deployments(ctx, rv)
	var pods []corev1.Pod
	var podsErr error
	unsettled := kreruntime.PodsToRead(deployments)
	if unsettled {
		pods, podsErr = kreruntime.Pods(ctx, r.APIReader, rv.Namespace, map[string]string{v1alpha1.VersionLabel: rv.Name})
	}
	unready, again := unreadyPods(ctx, pods, time.Now())
	err = errors.Join(err, listErr, podsErr)
	setStatus(rv, deployments, append(kreruntime.PodFailures(pods), unready...), waiting, err)
	return kreruntime.ResultOf(err, unsettled, again)
}

// reconcileDeployments makes the entrypoint's Service and Deployment and each node's
// Deployment, scaled to zero while the version waits for its Runtime's servers.
func (r *Reconciler) reconcileDeployments(ctx context.Context, rv *v1alpha1.RuntimeVersion, rt *v1alpha1.Runtime, waiting bool) error {
	w := ensure.Writer{Client: r.Client, APIReader: r.APIReader, Recorder: r.Recorder, Checked: r.checked}
	if err := w.Ensure(ctx, rv, entrypointService(rv)); err != nil {
		return err
	}
	if err := w.Ensure(ctx, rv, entrypointDeployment(rv, rt, waiting)); err != nil {
		return err
	}
	wires := wiring(rv)
	var errs []error
	for _, n := range rv.Spec.Nodes {
		errs = append(errs, w.Ensure(ctx, rv, nodeDeployment(rv, rt, n, wires[n.Name], waiting)))
	}
	return errors.Join(errs...)
}

// deployments returns rv's Deployments by component, as the cache has them.
func (r *Reconciler) deployments(ctx context.Context, rv *v1alpha1.RuntimeVersion) (map[string]*appsv1.Deployment, error) {
	list := &appsv1.DeploymentList{}
	if err := r.List(ctx, list, client.InNamespace(rv.Namespace), client.MatchingLabels{v1alpha1.VersionLabel: rv.Name}); err != nil {
		return nil, err
	}
	out := map[string]*appsv1.Deployment{}
	for i := range list.Items {
		if d := &list.Items[i]; metav1.IsControlledBy(d, rv) {
			out[d.Labels[v1alpha1.ComponentLabel]] = d
		}
	}
	return out, nil
}

// SetupWithManager watches RuntimeVersions, their Deployments and Services, and
// the Runtimes they name (a version waits for its Runtime).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.RuntimeVersion{}, runtimeRefField,
		func(obj client.Object) []string { return []string{obj.(*v1alpha1.RuntimeVersion).Spec.RuntimeRef.Name} })
	if err != nil {
		return err
	}
	if err := status.ExportConditions(mgr, "RuntimeVersion", &v1alpha1.RuntimeVersionList{}, nil); err != nil {
		return err
	}
	r.checked = ensure.NewCheckedVersions(&corev1.Service{})
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.RuntimeVersion{}).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}, builder.OnlyMetadata).
		Watches(&v1alpha1.Runtime{}, handler.EnqueueRequestsFromMapFunc(r.versionsOfRuntime)).
		Named("runtimeversion").
		Complete(r)
}

// versionsOfRuntime are the RuntimeVersions that name a Runtime.
func (r *Reconciler) versionsOfRuntime(ctx context.Context, obj client.Object) []reconcile.Request {
	list := &v1alpha1.RuntimeVersionList{}
	if err := r.List(ctx, list, client.InNamespace(obj.GetNamespace()), client.MatchingFields{runtimeRefField: obj.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the RuntimeVersions of a Runtime", "runtime", obj.GetName())
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, v := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&v)})
	}
	return out
}
