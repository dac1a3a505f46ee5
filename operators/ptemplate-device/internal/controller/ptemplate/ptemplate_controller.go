// Package ptemplate reconciles Ptemplates: a KMM Module that loads a character-device
// kernel module and runs its device plugin, and a DaemonSet of consumer pods that get the
// devices where the module is loaded.
package ptemplate

import (
	"context"
	"errors"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	v1alpha "github.com/quintet-operators/quintet/operators/ptemplate-device/api/v1alpha"
	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/ensure"
	"github.com/quintet-operators/quintet/shared/labelled"
	"github.com/quintet-operators/quintet/shared/optionalkind"
	"github.com/quintet-operators/quintet/shared/status"
)

// kmmRecheck is how often a Ptemplate waiting for KMM looks for its CRD again.
const kmmRecheck = 15 * time.Second

// Reconciler keeps each Ptemplate's Module and consumer DaemonSet.
type Reconciler struct {
	client.Client
	// APIReader reads past the cache, which holds only the operator's labelled objects.
	APIReader client.Reader
	Recorder  recorder.EventRecorder
	// Policy is what Ptemplates may ask KMM for; anything else is refused.
	Policy Policy

	kmm         *optionalkind.Watch
	transitions conditions.Transitions
}

// +kubebuilder:rbac:groups=ptemplates.pt.example.com,resources=ptemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups=ptemplates.pt.example.com,resources=ptemplates/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=ptemplates.pt.example.com,resources=ptemplates/finalizers,verbs=update
// +kubebuilder:rbac:groups=kmm.sigs.x-k8s.io,resources=modules,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one Ptemplate's Module and consumers to its spec and reports them.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, reterr error) {
	pt := &v1alpha.Ptemplate{}
	if err := r.Get(ctx, req.NamespacedName, pt); err != nil {
		if apierrors.IsNotFound(err) {
			r.transitions.Forget(req.Namespace, req.Name)
			forgetPtemplateMetrics(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !pt.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // the Module and the DaemonSet go with it (owner references)
	}
	patcher := status.NewPatcher(pt, status.WithEvents(r.Recorder, &r.transitions, conditions.DegradedCondition))
	defer func() {
		res, reterr = patcher.Finish(ctx, r.Client, pt, res, reterr)
		recordPtemplateMetrics(pt)
	}()
	ctx, changes := ensure.WithChangeSet(ctx) // one Event per reason of what the pass wrote
	defer changes.Record(r.Recorder, pt)
	return r.reconcileNormal(ctx, pt)
}

// reconcileNormal checks the spec against the policy, waits for KMM, makes the Module and the
// DaemonSet, and computes status.
func (r *Reconciler) reconcileNormal(ctx context.Context, pt *v1alpha.Ptemplate) (ctrl.Result, error) {
	if refusal := r.Policy.Refusal(pt); refusal != "" {
		setNotAllowed(pt, refusal)
		return ctrl.Result{}, nil // the policy changes only with the manager's flags, which restart it
	}
	installed, err := r.kmm.Served()
	switch {
	case err != nil:
		return ctrl.Result{}, err
	case !installed:
		setKMMNotInstalled(pt)
		return ctrl.Result{RequeueAfter: kmmRecheck}, nil
	}
	w := ensure.Writer{Client: r.Client, APIReader: r.APIReader, Recorder: r.Recorder}
	nodes := r.Policy.nodeSelector(pt)
	err = errors.Join(w.Ensure(ctx, pt, module(pt, nodes)), w.Ensure(ctx, pt, consumers(pt, nodes)))
	seen, observeErr := r.observe(ctx, pt)
	err = errors.Join(err, observeErr)
	setStatus(pt, seen, err)
	return ensure.ResultOf(err)
}

// observed is what a pass saw of a Ptemplate's consumers.
type observed struct {
	daemonSet *appsv1.DaemonSet // nil when not (yet) in the cache
	pods      []corev1.Pod
	nodes     []string // where KMM reports the module loaded
}

// observe reads the consumer DaemonSet and pods, and the nodes with the module loaded.
func (r *Reconciler) observe(ctx context.Context, pt *v1alpha.Ptemplate) (observed, error) {
	var seen observed
	ds := &appsv1.DaemonSet{}
	switch err := r.Get(ctx, client.ObjectKey{Namespace: pt.Namespace, Name: consumerName(pt)}, ds); {
	case err == nil:
		seen.daemonSet = ds
	case !apierrors.IsNotFound(err):
		return seen, err
	}
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(pt.Namespace), client.MatchingLabels{v1alpha.PtemplateLabel: pt.Name}); err != nil {
		return seen, err
	}
	seen.pods = pods.Items
	loaded, err := labels.NewRequirement(ModuleReadyLabel(pt.Namespace, pt.Name), selection.Exists, nil)
	if err != nil {
		return seen, err
	}
	nodes := &corev1.NodeList{}
	if err := r.List(ctx, nodes, client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*loaded)}); err != nil {
		return seen, err
	}
	for _, n := range nodes.Items {
		seen.nodes = append(seen.nodes, n.Name)
	}
	return seen, nil
}

// SetupWithManager watches Ptemplates, their DaemonSets and consumer pods, the nodes KMM
// labels, and (once KMM's CRD is served) their Modules.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := status.ExportConditions(mgr, "Ptemplate", &v1alpha.PtemplateList{}, nil); err != nil {
		return err
	}
	c, err := ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha.Ptemplate{}).
		Owns(&appsv1.DaemonSet{}).
		Watches(&corev1.Pod{}, labelled.ToOwner(v1alpha.PtemplateLabel)).
		Watches(&corev1.Node{}, nodeEvents).
		Named("ptemplate").
		Build(r)
	if err != nil {
		return err
	}
	r.kmm = optionalkind.Owned(mgr, c, moduleGVK, &v1alpha.Ptemplate{})
	return nil
}
