// Package etcdrestore runs EtcdRestores: each makes one new EtcdCluster whose spec.restore is
// the EtcdRestore's snapshot, and reports how that cluster's restore goes. The EtcdCluster
// reconciler does the restore itself; a restore never touches a cluster it did not make.
package etcdrestore

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/controller/scope"
	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/labelled"
	"github.com/quintet-operators/quintet/shared/status"
)

// Reconciler makes the clusters of EtcdRestores.
type Reconciler struct {
	client.Client
	Recorder recorder.EventRecorder
	// ClusterWide: as the EtcdCluster reconciler's, the CoreOS scope annotation decides
	// which manager takes an EtcdRestore; the cluster it makes carries the same annotation.
	ClusterWide bool

	transitions conditions.Transitions
}

// +kubebuilder:rbac:groups=etcd.database.coreos.com,resources=etcdrestores,verbs=get;list;watch
// +kubebuilder:rbac:groups=etcd.database.coreos.com,resources=etcdrestores/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=etcd.database.coreos.com,resources=etcdclusters,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile makes er's cluster, once, and reports its restore.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, reterr error) {
	er := &v1beta2.EtcdRestore{}
	if err := r.Get(ctx, req.NamespacedName, er); err != nil {
		if apierrors.IsNotFound(err) {
			r.transitions.Forget(req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !scope.Manages(er, r.ClusterWide) || !er.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // another operator's, or going away: its cluster stays
	}
	patcher := status.NewPatcher(er, status.WithEvents(r.Recorder, &r.transitions, conditions.DegradedCondition))
	defer func() { res, reterr = patcher.Finish(ctx, r.Client, er, res, reterr) }()
	c, err := r.reconcileCluster(ctx, er)
	if err != nil {
		return ctrl.Result{}, err
	}
	setStatus(er, c)
	if c != nil && c.UID != er.Status.ClusterUID {
		// Someone else's cluster has the name: look again now and then, and make the
		// cluster once the name is free (the CoreOS flow deletes the cluster, then restores).
		return ctrl.Result{RequeueAfter: recheckTaken}, nil
	}
	return ctrl.Result{}, nil
}

// recheckTaken is how often a restore whose cluster name is taken looks again.
const recheckTaken = 30 * time.Second

// reconcileCluster returns the cluster er names, made first if er has not made one yet;
// nil when the one it made is gone.
func (r *Reconciler) reconcileCluster(ctx context.Context, er *v1beta2.EtcdRestore) (*v1beta2.EtcdCluster, error) {
	c := &v1beta2.EtcdCluster{}
	err := r.Get(ctx, client.ObjectKey{Namespace: er.Namespace, Name: er.Spec.EtcdCluster.Name}, c)
	switch {
	case err == nil:
		if er.Status.ClusterUID == "" && madeBy(c, er) {
			er.Status.ClusterUID = c.UID // made by a pass whose status was not written
		}
		return c, nil
	case !apierrors.IsNotFound(err):
		return nil, err
	case er.Status.ClusterUID != "":
		return nil, nil // made, then deleted: never made twice
	}
	c = desiredCluster(er)
	if err := r.Create(ctx, c); err != nil {
		return nil, err
	}
	ctrl.LoggerFrom(ctx).Info("Made the cluster to restore", "etcdCluster", c.Name)
	r.Recorder.Eventf(er, c, "Normal", "Created", "Create", "Made EtcdCluster %s, which starts from %s", c.Name, er.Spec.Location())
	er.Status.ClusterUID = c.UID
	return c, nil
}

// madeBy says whether c is the cluster er makes.
func madeBy(c *v1beta2.EtcdCluster, er *v1beta2.EtcdRestore) bool {
	return c.Labels[v1beta2.RestoredByLabel] == er.Name && equality.Semantic.DeepEqual(c.Spec.Restore, &er.Spec.RestoreSource)
}

// desiredCluster is the cluster er makes: its clusterSpec (the API server defaults what is
// unset: 3 members of the default version), starting from er's snapshot.
func desiredCluster(er *v1beta2.EtcdRestore) *v1beta2.EtcdCluster {
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{
		Name: er.Spec.EtcdCluster.Name, Namespace: er.Namespace,
		Labels: map[string]string{v1beta2.RestoredByLabel: er.Name},
	}}
	if value, ok := er.Annotations[v1beta2.ScopeAnnotation]; ok {
		c.Annotations = map[string]string{v1beta2.ScopeAnnotation: value}
	}
	if er.Spec.ClusterSpec != nil {
		c.Spec = *er.Spec.ClusterSpec.DeepCopy()
	}
	c.Spec.Restore = er.Spec.RestoreSource.DeepCopy()
	return c
}

// SetupWithManager watches EtcdRestores in scope and the clusters they made.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	name := scope.ControllerName("etcdrestore", r.ClusterWide)
	if err := status.ExportConditions(mgr, "EtcdRestore", &v1beta2.EtcdRestoreList{}, scope.Filter(r.ClusterWide)); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1beta2.EtcdRestore{}, builder.WithPredicates(scope.Predicate(r.ClusterWide))).
		Watches(&v1beta2.EtcdCluster{}, labelled.ToOwner(v1beta2.RestoredByLabel)).
		Named(name).
		Complete(r)
}
