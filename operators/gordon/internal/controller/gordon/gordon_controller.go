// Package gordon reconciles Gordons: it keeps spec.gordon.replicas bare pods running per
// Gordon, replacing deleted, evicted and terminated pods, as the ReplicaSet controller does,
// and rolls them to a changed pod template as a Deployment does.
package gordon

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	v1 "github.com/quintet-operators/quintet/operators/gordon/api/v1"
	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/status"
)

// Reconciler keeps the pods of each Gordon.
type Reconciler struct {
	client.Client
	Recorder recorder.EventRecorder
	// ProxyEnv are the cluster's proxy settings OLM gives the manager (HTTP_PROXY, HTTPS_PROXY,
	// NO_PROXY), passed on to every pod.
	ProxyEnv []corev1.EnvVar

	expectations *expectations
	backoff      *replacementBackoff
	transitions  conditions.Transitions
}

// +kubebuilder:rbac:groups=operator.prgcont.cz,resources=gordons,verbs=get;list;watch
// +kubebuilder:rbac:groups=operator.prgcont.cz,resources=gordons/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=operator.prgcont.cz,resources=gordons/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one Gordon's pods to its spec and reports them in its status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, reterr error) {
	g := &v1.Gordon{}
	if err := r.Get(ctx, req.NamespacedName, g); err != nil {
		if apierrors.IsNotFound(err) {
			r.expectations.forget(req.String())
			r.backoff.forget(req.String())
			r.transitions.Forget(req.Namespace, req.Name)
			forgetGordonMetrics(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !g.DeletionTimestamp.IsZero() {
		// The pods go with the Gordon through their owner references: nothing to clean up.
		return ctrl.Result{}, nil
	}
	patcher := status.NewPatcher(g, status.WithEvents(r.Recorder, &r.transitions, conditions.DegradedCondition))
	defer func() {
		res, reterr = patcher.Finish(ctx, r.Client, g, res, reterr)
		recordGordonMetrics(g)
	}()
	return r.reconcileNormal(ctx, g)
}

// reconcileNormal replaces terminated pods, scales or rolls the pods, and computes the status.
func (r *Reconciler) reconcileNormal(ctx context.Context, g *v1.Gordon) (ctrl.Result, error) {
	// Until the cache shows the last pass's creations and deletions, counting pods would
	// count wrong: wait for the pod events instead. Checked before listing, as the
	// ReplicaSet controller does: an event arriving between the list and the check would
	// satisfy the expectations of a list that does not show its pod.
	synced := r.expectations.satisfied(keyOf(g))
	pods, err := r.ownedPods(ctx, g)
	if err != nil {
		return ctrl.Result{}, err
	}
	active, terminated := classifyPods(pods)
	template := newPod(g, r.ProxyEnv)
	current, outdated := splitByTemplate(active, template.Labels[v1.TemplateHashLabel])
	res := syncResult{current: current, outdated: outdated, terminated: terminated}
	res.replaceAfter, res.deleteErr = r.removeTerminatedPods(ctx, g, terminated)
	if synced {
		r.applyPlan(ctx, g, template, planFor(g, res), &res)
	}
	setStatus(g, res)
	if err := kerrors.NewAggregate([]error{res.createErr, res.deleteErr}); err != nil {
		return ctrl.Result{}, err
	}
	// Look again when the replacement of terminated pods may go ahead.
	return ctrl.Result{RequeueAfter: res.replaceAfter}, nil
}

// ownedPods lists the pods labelled for g that g controls.
func (r *Reconciler) ownedPods(ctx context.Context, g *v1.Gordon) ([]corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := r.List(ctx, list, client.InNamespace(g.Namespace), client.MatchingLabels{v1.GordonLabel: g.Name}); err != nil {
		return nil, err
	}
	owned := list.Items[:0]
	for _, p := range list.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == g.UID {
			owned = append(owned, p)
		}
	}
	return owned, nil
}

// SetupWithManager watches Gordons and the pods they control.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.expectations = newExpectations()
	r.backoff = newReplacementBackoff()
	if err := status.ExportConditions(mgr, "Gordon", &v1.GordonList{}, nil); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1.Gordon{}).
		Watches(&corev1.Pod{}, &podEventHandler{expectations: r.expectations}).
		Named("gordon").
		Complete(r)
}
