// Package kreruntime reconciles KRE Runtimes: MongoDB, NATS (JetStream) and MinIO as StatefulSets
// with their Services, volumes and credentials Secrets, and an Ingress to the started
// RuntimeVersion's entrypoint.
package kreruntime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/ensure"
	"github.com/quintet-operators/quintet/shared/status"
)

// Reconciler makes each Runtime's infrastructure.
type Reconciler struct {
	client.Client
	// APIReader reads past the cache, which holds only objects labelled for a Runtime.
	APIReader client.Reader
	Recorder  recorder.EventRecorder
	// Entrypoints is what the operator's administrator lets entrypoints' Ingresses take.
	Entrypoints EntrypointPolicy

	transitions conditions.Transitions
	// checked remembers the Services and Secrets found as wanted: the cache holds them as
	// metadata.
	checked *ensure.CheckedVersions
}

// +kubebuilder:rbac:groups=kre.konstellation.io,resources=runtimes,verbs=get;list;watch
// +kubebuilder:rbac:groups=kre.konstellation.io,resources=runtimes/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kre.konstellation.io,resources=runtimes/finalizers,verbs=update
// +kubebuilder:rbac:groups=kre.konstellation.io,resources=runtimeversions,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=list
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one Runtime's infrastructure to its spec and reports it in its status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, reterr error) {
	rt := &v1alpha1.Runtime{}
	if err := r.Get(ctx, req.NamespacedName, rt); err != nil {
		if apierrors.IsNotFound(err) {
			r.transitions.Forget(req.Namespace, req.Name)
			forgetRuntimeMetrics(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !rt.DeletionTimestamp.IsZero() {
		// What the Runtime made goes with it through owner references; volume claims as
		// spec.volumeRetention says (the StatefulSets' WhenDeleted).
		return ctrl.Result{}, nil
	}
	patcher := status.NewPatcher(rt, status.WithEvents(r.Recorder, &r.transitions, conditions.DegradedCondition, v1alpha1.InlineCredentialsCondition))
	var versions []v1alpha1.RuntimeVersion // the namespace's RuntimeVersions as the pass saw them, for the metrics
	defer func() {
		res, reterr = patcher.Finish(ctx, r.Client, rt, res, reterr)
		recordRuntimeMetrics(rt, versions)
	}()
	ctx, changes := ensure.WithChangeSet(ctx) // one Event per reason of what the pass wrote
	defer changes.Record(r.Recorder, rt)
	result, versions, err := r.reconcileNormal(ctx, rt)
	return result, err
}

// reconcileNormal makes each component, then the entrypoint's Ingress, and computes status;
// it returns the RuntimeVersions of rt's namespace. An entrypoint the policy refuses is not
// published: no Ingress routes to it.
func (r *Reconciler) reconcileNormal(ctx context.Context, rt *v1alpha1.Runtime) (ctrl.Result, []v1alpha1.RuntimeVersion, error) {
	comps := components(rt)
	errs := make([]error, 0, 4)
	stopped, err := r.reconcileComponents(ctx, rt, comps)
	errs = append(errs, err)
	versions := &v1alpha1.RuntimeVersionList{}
	version, err := "", r.List(ctx, versions, client.InNamespace(rt.Namespace))
	refusal := r.Entrypoints.Refusal(rt)
	if err == nil && !stopped {
		if refusal == "" {
			version = startedVersion(rt.Name, versions.Items)
		}
		err = r.reconcileIngress(ctx, rt, version)
	}
	errs = append(errs, err)
	sets, err := r.statefulSets(ctx, rt)
	errs = append(errs, err)
	var failures []string
	unsettled := PodsToRead(sets)
	if unsettled {
		pods, err := Pods(ctx, r.APIReader, rt.Namespace, map[string]string{v1alpha1.RuntimeLabel: rt.Name})
		errs = append(errs, err)
		failures = PodFailures(pods)
	}
	err = errors.Join(errs...)
	setStatus(rt, comps, sets, version, refusal, failures, err)
	result, err := ResultOf(err, unsettled, 0)
	return result, versions.Items, err
}

// reconcileComponents makes each component in turn, and says whether it stopped, making
// nothing more (the Ingress neither): at another Runtime's object, or at a create the API
// server refused because the namespace is being deleted (where it would refuse every other).
// A namespace's servers have fixed names, so they are one Runtime's (KRE runs one per
// namespace): once a pass finds one of them made for another Runtime, it makes nothing more,
// and two Runtimes created at once never split the servers between them.
func (r *Reconciler) reconcileComponents(ctx context.Context, rt *v1alpha1.Runtime, comps []component) (stopped bool, err error) {
	var errs []error
	for _, c := range comps {
		err := r.reconcileComponent(ctx, rt, c)
		if ensure.IsNamespaceTerminating(err) {
			return true, errors.Join(append(errs, err)...)
		}
		if notOwned, ok := ensure.IsNotOwned(err); ok {
			if other := notOwned.Labels[v1alpha1.RuntimeLabel]; other != "" && other != rt.Name && notOwned.Labels[ManagedByLabel] == ManagedBy {
				err = fmt.Errorf("%w; it was made for Runtime %s, and a namespace's servers are one Runtime's: this one makes none of them", err, other)
				return true, errors.Join(append(errs, err)...)
			}
		}
		errs = append(errs, err)
	}
	return false, errors.Join(errs...)
}

// reconcileComponent makes c's credentials Secret, Services and StatefulSet.
func (r *Reconciler) reconcileComponent(ctx context.Context, rt *v1alpha1.Runtime, c component) error {
	if err := r.reconcileCredentials(ctx, rt, c); err != nil {
		return err
	}
	for _, svc := range services(rt, c) {
		if err := r.ensure(ctx, rt, svc); err != nil {
			return err
		}
	}
	return r.ensure(ctx, rt, statefulSet(rt, c))
}

// reconcileCredentials copies c's inline credentials into its Secret, or generates them once.
// A Secret the user names (secretRef) is the user's: the operator neither reads nor writes it.
func (r *Reconciler) reconcileCredentials(ctx context.Context, rt *v1alpha1.Runtime, c component) error {
	if c.credentials == nil || c.credentials.fromUser {
		return nil
	}
	desired := credentialsSecret(rt, c)
	if c.credentials.inline != nil {
		return r.ensure(ctx, rt, desired)
	}
	// Generated: made once, never replaced (the component's data is locked with them). The
	// cache holds Secrets as metadata alone: who owns this one is all a pass needs to know.
	existing := &metav1.PartialObjectMetadata{}
	existing.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	err := r.Get(ctx, client.ObjectKeyFromObject(desired), existing)
	if apierrors.IsNotFound(err) {
		if rt.Spec.VolumeRetention == v1alpha1.VolumeDelete {
			return r.ensure(ctx, rt, desired)
		}
		if err = r.createRetained(ctx, rt, desired); !apierrors.IsAlreadyExists(err) {
			return err
		}
		// The cache has not seen what an earlier pass created, or the Secret is someone
		// else's (unlabelled, so outside the cache): the API server says which.
		err = r.APIReader.Get(ctx, client.ObjectKeyFromObject(desired), existing)
	}
	switch {
	case err != nil:
		return err
	case metav1.IsControlledBy(existing, rt) || retainedFor(existing, rt, c):
		return nil
	default:
		return r.ensure(ctx, rt, desired) // refuses it, saying whose it is
	}
}

// createRetained creates generated credentials that outlive rt, as its volumes do with
// volumeRetention Retain: no owner reference, so that a Runtime made again with the same
// name finds the credentials its retained data was initialised with.
func (r *Reconciler) createRetained(ctx context.Context, rt *v1alpha1.Runtime, secret *corev1.Secret) error {
	ctrl.LoggerFrom(ctx).Info("Creating Secret", "Secret", secret.Name, "retained", true)
	if err := r.Create(ctx, secret); err != nil {
		return ensure.WriteError("creating", "Secret", secret, err)
	}
	r.Recorder.Eventf(rt, secret, corev1.EventTypeNormal, ensure.EventCreated, ensure.EventCreated,
		"Created Secret %s, kept with the volumes when the Runtime is deleted (volumeRetention: Retain)", secret.Name)
	return nil
}

// retainedFor says whether secret is generated credentials of c that an earlier Runtime of
// rt's name left with its volumes.
func retainedFor(secret metav1.Object, rt *v1alpha1.Runtime, c component) bool {
	l := secret.GetLabels()
	return metav1.GetControllerOf(secret) == nil && l[v1alpha1.RuntimeLabel] == rt.Name && l[v1alpha1.ComponentLabel] == c.name &&
		l[ManagedByLabel] == ManagedBy
}

// reconcileIngress routes rt's entrypoint host to version's entrypoint; with no version (none
// started, or the entrypoint refused) there is no Ingress.
func (r *Reconciler) reconcileIngress(ctx context.Context, rt *v1alpha1.Runtime, version string) error {
	if version != "" {
		return r.ensure(ctx, rt, ingress(rt, version))
	}
	existing := &networkingv1.Ingress{}
	err := r.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: IngressName}, existing)
	if err != nil || !metav1.IsControlledBy(existing, rt) {
		return client.IgnoreNotFound(err)
	}
	ctrl.LoggerFrom(ctx).Info("Deleting Ingress", "Ingress", IngressName, "reason", "no RuntimeVersion is started, or the entrypoint is refused")
	return client.IgnoreNotFound(r.Delete(ctx, existing, client.Preconditions{UID: &existing.UID}))
}

// startedVersions are the RuntimeVersions of versions that name runtime and are Started (and
// not going).
func startedVersions(runtime string, versions []v1alpha1.RuntimeVersion) []v1alpha1.RuntimeVersion {
	var started []v1alpha1.RuntimeVersion
	for _, v := range versions {
		if v.Spec.RuntimeRef.Name == runtime && v.Spec.State != v1alpha1.StateStopped && v.DeletionTimestamp.IsZero() {
			started = append(started, v)
		}
	}
	return started
}

// startedVersion is the newest Started RuntimeVersion of runtime, "" when none is.
func startedVersion(runtime string, versions []v1alpha1.RuntimeVersion) string {
	started := startedVersions(runtime, versions)
	if len(started) == 0 {
		return ""
	}
	newest := slices.MaxFunc(started, func(a, b v1alpha1.RuntimeVersion) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return -cmp.Compare(a.Name, b.Name)
	})
	return newest.Name
}

// statefulSets returns rt's StatefulSets by component, as the cache has them.
func (r *Reconciler) statefulSets(ctx context.Context, rt *v1alpha1.Runtime) (map[string]*appsv1.StatefulSet, error) {
	list := &appsv1.StatefulSetList{}
	if err := r.List(ctx, list, client.InNamespace(rt.Namespace), client.MatchingLabels{v1alpha1.RuntimeLabel: rt.Name}); err != nil {
		return nil, err
	}
	sets := map[string]*appsv1.StatefulSet{}
	for i := range list.Items {
		if s := &list.Items[i]; metav1.IsControlledBy(s, rt) {
			sets[s.Labels[v1alpha1.ComponentLabel]] = s
		}
	}
	return sets, nil
}

func (r *Reconciler) ensure(ctx context.Context, rt *v1alpha1.Runtime, desired client.Object) error {
	return ensure.Writer{Client: r.Client, APIReader: r.APIReader, Recorder: r.Recorder, Checked: r.checked}.Ensure(ctx, rt, desired)
}

// SetupWithManager watches Runtimes, what they own, and the RuntimeVersions that name them.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := status.ExportConditions(mgr, "Runtime", &v1alpha1.RuntimeList{}, nil); err != nil {
		return err
	}
	r.checked = ensure.NewCheckedVersions(&corev1.Service{}, &corev1.Secret{})
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.Runtime{}).
		Owns(&appsv1.StatefulSet{}).
		Owns(&corev1.Service{}, builder.OnlyMetadata).
		Owns(&corev1.Secret{}, builder.OnlyMetadata).
		Owns(&networkingv1.Ingress{}).
		Watches(&v1alpha1.RuntimeVersion{}, handler.EnqueueRequestsFromMapFunc(runtimeOfVersion)).
		Named("runtime").
		Complete(r)
}

// runtimeOfVersion is the Runtime a RuntimeVersion names.
func runtimeOfVersion(_ context.Context, obj client.Object) []reconcile.Request {
	v, ok := obj.(*v1alpha1.RuntimeVersion)
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: v.Namespace, Name: v.Spec.RuntimeRef.Name}}}
}
