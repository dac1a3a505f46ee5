// Package minimart reconciles Minimarts: each is a release of the minimart Helm chart,
// installed, upgraded and uninstalled with Helm's own actions and storage.
package minimart

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/release"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/quintet-operators/quintet/operators/minimart/api/v1alpha1"
	helmrelease "github.com/quintet-operators/quintet/operators/minimart/internal/release"
	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/ensure"
	"github.com/quintet-operators/quintet/shared/status"
)

// Reconciler makes each Minimart's release.
type Reconciler struct {
	client.Client
	Releases *helmrelease.Client
	Recorder recorder.EventRecorder

	// leading is when this manager began to lead (see leadingSince).
	leading     time.Time
	leadingOnce sync.Once

	transitions conditions.Transitions
}

// +kubebuilder:rbac:groups=charts.samutup.com,resources=minimarts,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=charts.samutup.com,resources=minimarts/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=charts.samutup.com,resources=minimarts/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update;patch;delete
// The chart's NetworkPolicy: Helm's kube client gets, creates, patches (its three-way merge;
// it replaces objects only with --force, never set here) and deletes it; the cache lists and
// watches it.
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;patch;delete

// Helm's release storage (driver.Secrets, sh.helm.release.v1.<release>.v<N> in the release's
// namespace) gets, lists (history is a label query), creates, updates and deletes Secrets; it
// never watches or patches them, and the cache holds none.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;create;update;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one Minimart's release to its spec and reports it in its status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, reterr error) {
	m := &v1alpha1.Minimart{}
	if err := r.Get(ctx, req.NamespacedName, m); err != nil {
		if client.IgnoreNotFound(err) == nil {
			r.transitions.Forget(req.Namespace, req.Name)
			forgetReleaseMetrics(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !m.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.reconcileDelete(ctx, m)
	}
	if err := r.addFinalizer(ctx, m); err != nil {
		return ctrl.Result{}, err
	}
	patcher := status.NewPatcher(m, status.WithEvents(r.Recorder, &r.transitions, conditions.DegradedCondition))
	var last *release.Release // the release's newest revision as the pass leaves it, for the metrics
	defer func() {
		res, reterr = patcher.Finish(ctx, r.Client, m, res, reterr)
		recordReleaseMetrics(m, last)
	}()
	result, last, err := r.reconcileNormal(ctx, m)
	return result, err
}

// addFinalizer holds m until its release is uninstalled: the release's history lives in
// Secrets the Minimart does not own.
func (r *Reconciler) addFinalizer(ctx context.Context, m *v1alpha1.Minimart) error {
	if controllerutil.ContainsFinalizer(m, v1alpha1.Finalizer) {
		return nil
	}
	patch := client.MergeFrom(m.DeepCopy())
	controllerutil.AddFinalizer(m, v1alpha1.Finalizer)
	return r.Patch(ctx, m, patch)
}

// reconcileDelete uninstalls the release, then lets the Minimart go.
func (r *Reconciler) reconcileDelete(ctx context.Context, m *v1alpha1.Minimart) error {
	if !controllerutil.ContainsFinalizer(m, v1alpha1.Finalizer) {
		return nil
	}
	ctrl.LoggerFrom(ctx).Info("Uninstalling release", "release", m.Name)
	if err := r.Releases.Uninstall(m.Namespace, m.Name); err != nil {
		countReleaseFailure(m, actionUninstall)
		return fmt.Errorf("uninstalling release %s: %w", m.Name, err)
	}
	r.Recorder.Eventf(m, nil, corev1.EventTypeNormal, v1alpha1.EventUninstalled, "Uninstall", "Uninstalled release %s", m.Name)
	patch := client.MergeFrom(m.DeepCopy())
	controllerutil.RemoveFinalizer(m, v1alpha1.Finalizer)
	return client.IgnoreNotFound(r.Patch(ctx, m, patch))
}

// reconcileNormal recovers an interrupted release, installs or upgrades it when the spec or
// the chart changed, restores its objects when they drifted, and computes status; it returns
// the release's newest revision as it leaves it (nil when it read none). In a namespace being
// deleted, whose deletion takes the release's objects and revisions before the Minimart, an
// install or restore the API server refused is not tried again.
func (r *Reconciler) reconcileNormal(ctx context.Context, m *v1alpha1.Minimart) (ctrl.Result, *release.Release, error) {
	o, retry := r.reconcileRelease(ctx, m)
	if o.err == nil && o.releaseErr == nil && !o.otherOperation && !o.deployed {
		// The release is deployed as the spec asks: only its objects may have drifted.
		o.err = r.restoreDrift(ctx, m, o.last)
	}
	deployment, err := r.deployment(ctx, m)
	o.deployment, o.err = deployment, errors.Join(o.err, err)
	setStatus(m, o)
	switch {
	case o.namespaceTerminating():
		return ctrl.Result{}, o.last, nil // the Minimart's deletion comes next, and wakes a pass
	case o.err != nil:
		return ctrl.Result{}, o.last, o.err
	case o.releaseErr != nil, o.otherOperation:
		return ctrl.Result{RequeueAfter: retry}, o.last, nil
	}
	return ctrl.Result{}, o.last, nil
}

// reconcileRelease reads the release's history and takes the step plan() chooses: install,
// upgrade, recover a release left pending, or wait; with a failed operation it says when to
// try again.
func (r *Reconciler) reconcileRelease(ctx context.Context, m *v1alpha1.Minimart) (observation, time.Duration) {
	values, err := valuesOf(m)
	if err != nil {
		return observation{err: err}, 0
	}
	history, err := r.Releases.History(m.Namespace, m.Name)
	if err != nil {
		return observation{err: err}, 0
	}
	var last *release.Release
	if len(history) > 0 {
		last = history[len(history)-1]
	}
	next, wait := plan(history, values, r.chartVersion(), time.Now(), r.leadingSince())
	switch next {
	case stepInstall:
		return r.installRelease(ctx, m, values, last)
	case stepUpgrade:
		return r.upgradeRelease(ctx, m, values, last)
	case stepRecover:
		return r.recoverRelease(ctx, m, values, last)
	case stepWait:
		return observation{last: last, upToDate: true, releaseErr: errors.New(last.Info.Description)}, wait
	case stepWaitOther:
		return observation{last: last, otherOperation: true}, wait
	}
	return observation{last: last, upToDate: true}, 0 // stepNone
}

// installRelease installs the release: there is none, or it was uninstalled keeping history.
func (r *Reconciler) installRelease(ctx context.Context, m *v1alpha1.Minimart, values map[string]any, last *release.Release) (observation, time.Duration) {
	ctrl.LoggerFrom(ctx).Info("Installing release", "release", m.Name, "chart", r.chartVersion())
	rel, err := r.Releases.Install(m.Namespace, m.Name, values, r.postRenderer(m))
	return r.deployed(ctx, m, actionInstall, v1alpha1.EventInstalled, rel, last, err)
}

// upgradeRelease upgrades the release to the spec's values and the operator's chart.
func (r *Reconciler) upgradeRelease(ctx context.Context, m *v1alpha1.Minimart, values map[string]any, last *release.Release) (observation, time.Duration) {
	ctrl.LoggerFrom(ctx).Info("Upgrading release", "release", m.Name, "chart", r.chartVersion())
	rel, err := r.Releases.Upgrade(m.Namespace, m.Name, values, r.postRenderer(m))
	return r.deployed(ctx, m, actionUpgrade, v1alpha1.EventUpgraded, rel, last, err)
}

// recoverRelease marks pending, a revision left pending by an operation that was cut off (see
// plan), failed, as Helm refuses to upgrade a pending release ("another operation is in
// progress"); then it upgrades at once: the operation did not fail, it was cut off.
func (r *Reconciler) recoverRelease(ctx context.Context, m *v1alpha1.Minimart, values map[string]any, pending *release.Release) (observation, time.Duration) {
	was := pending.Info.Status
	ctrl.LoggerFrom(ctx).Info("Recovering release left pending", "release", m.Name, "revision", pending.Version, "status", was)
	if err := r.Releases.MarkFailed(pending, fmt.Sprintf("%s was interrupted; recovered by the minimart operator", was)); err != nil {
		return observation{err: fmt.Errorf("recovering release %s from %s: %w", m.Name, was, err)}, 0
	}
	r.Recorder.Eventf(m, nil, corev1.EventTypeWarning, v1alpha1.ReasonReleaseRecovered, "Recover",
		"Release %s revision %d was left %s by an interrupted operation; marked failed to proceed", m.Name, pending.Version, was)
	return r.upgradeRelease(ctx, m, values, pending)
}

// deployed is what an install or upgrade (action, and reason: its Event's) left: the new
// revision, or Helm's error, counted and retried after a back-off; not so the API server's
// refusal in a namespace being deleted (see reconcileNormal). Degraded turning True is the
// Warning Event of a failure, once per failure, not per retry.
func (r *Reconciler) deployed(ctx context.Context, m *v1alpha1.Minimart, action, reason string,
	rel, last *release.Release, err error) (observation, time.Duration) {
	if err != nil {
		o := observation{releaseErr: err, last: rel, upToDate: rel != nil}
		if rel == nil {
			o.last = last
		}
		if ensure.IsNamespaceTerminating(err) {
			return o, 0
		}
		countReleaseFailure(m, action)
		ctrl.LoggerFrom(ctx).Error(err, "Helm failed", "release", m.Name)
		return o, firstRetry
	}
	r.Recorder.Eventf(m, nil, corev1.EventTypeNormal, reason, "Deploy", "%s release %s revision %d (chart %s)", reason, rel.Name, rel.Version, r.chartVersion())
	return observation{last: rel, upToDate: true, deployed: true}, 0
}

// chartVersion is the version of the chart the operator runs.
func (r *Reconciler) chartVersion() string { return r.Releases.Chart.Metadata.Version }

// restoreDrift puts back the objects of rel that were deleted or edited.
func (r *Reconciler) restoreDrift(ctx context.Context, m *v1alpha1.Minimart, rel *release.Release) error {
	manifest, err := manifestObjects(rel.Manifest)
	if err != nil {
		return err
	}
	live, err := r.releaseObjects(ctx, m)
	if err != nil {
		return err
	}
	changed := drifted(manifest, live)
	if len(changed) == 0 {
		return nil
	}
	names := make([]string, len(changed))
	for i, k := range changed {
		names[i] = k.String()
	}
	ctrl.LoggerFrom(ctx).Info("Restoring drifted objects", "release", m.Name, "objects", names)
	if err := r.Releases.Restore(rel); err != nil {
		return fmt.Errorf("restoring %s of release %s: %w", strings.Join(names, ", "), m.Name, err)
	}
	countDriftCorrections(m, len(changed))
	r.Recorder.Eventf(m, nil, corev1.EventTypeNormal, v1alpha1.ReasonDriftRestored, "Restore",
		"Restored %s as release %s revision %d has them", strings.Join(names, ", "), m.Name, rel.Version)
	return nil
}

// releaseObjects are the objects of m's release (of releaseKinds), as the cache has them.
func (r *Reconciler) releaseObjects(ctx context.Context, m *v1alpha1.Minimart) (map[objectKey]client.Object, error) {
	mine := []client.ListOption{client.InNamespace(m.Namespace), client.MatchingLabels{v1alpha1.MinimartLabel: m.Name}}
	live := map[objectKey]client.Object{}
	for _, kind := range releaseKinds {
		gvk, err := apiutil.GVKForObject(kind, r.Scheme())
		if err != nil {
			return nil, err
		}
		list, err := r.Scheme().New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err != nil {
			return nil, err
		}
		if err := r.List(ctx, list.(client.ObjectList), mine...); err != nil {
			return nil, err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		for _, item := range items {
			obj := item.(client.Object)
			obj.GetObjectKind().SetGroupVersionKind(gvk) // as the manifest's objects have it
			live[objectKey{gvk.Kind, obj.GetName()}] = obj
		}
	}
	return live, nil
}

// deployment is the Deployment of m's release (named after m), nil when there is none.
func (r *Reconciler) deployment(ctx context.Context, m *v1alpha1.Minimart) (*appsv1.Deployment, error) {
	d := &appsv1.Deployment{}
	err := r.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.Name}, d)
	if client.IgnoreNotFound(err) != nil {
		return nil, err
	}
	if err != nil || !metav1.IsControlledBy(d, m) {
		return nil, nil //nolint:nilnil // no Deployment of the release
	}
	return d, nil
}

// leadingSince is when this manager began to lead: when it was elected, or its first pass if
// that came first (both follow the election). A pending revision older than that was left by
// an operation that was cut off: of a manager that is gone, or of the leader a standby
// replica took over from, whose operations began after the standby started.
func (r *Reconciler) leadingSince() time.Time {
	r.leadingOnce.Do(func() { r.leading = time.Now() })
	return r.leading
}

// postRenderer makes m the controller of every object of its release.
func (r *Reconciler) postRenderer(m *v1alpha1.Minimart) helmrelease.OwnedBy {
	return helmrelease.OwnedBy{
		Owner:    *metav1.NewControllerRef(m, v1alpha1.GroupVersion.WithKind("Minimart")),
		LabelKey: v1alpha1.MinimartLabel, LabelValue: m.Name,
	}
}

// SetupWithManager watches Minimarts (their spec: status writes wake nobody) and the objects
// of their releases, so that a deleted or edited one is restored.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	// A Runnable that needs leader election starts once this manager leads.
	if err := mgr.Add(manager.RunnableFunc(func(context.Context) error { r.leadingSince(); return nil })); err != nil {
		return err
	}
	if err := status.ExportConditions(mgr, "Minimart", &v1alpha1.MinimartList{}, nil); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.Minimart{}, builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	for _, kind := range releaseKinds {
		b = b.Owns(kind)
	}
	return b.Named("minimart").Complete(r)
}
